package io.flowkafka.cli;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineGraph;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.spec.SpecProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka describe}: prints a pipeline spec as a graph, as text or Mermaid ({@link PipelineGraph}), after
 * validating it ({@link SpecFiles}); an invalid spec prints every problem with its computation and field and exits 1.
 */
@Command(name = "describe", description = "Print the pipeline as a graph: computations, streams, sources, sinks.")
final class DescribeCommand implements Callable<Integer> {
    enum Format { text, mermaid }

    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Option(names = {"-s", "--spec"}, required = true, paramLabel = "FILE",
            description = "the pipeline spec (JSON or YAML, .yaml/.yml)")
    Path specFile;

    @Option(names = {"-f", "--format"}, defaultValue = "text", paramLabel = "FORMAT",
            description = "text (default) or mermaid")
    Format format;

    @Override
    public Integer call() {
        if (!Files.isReadable(specFile)) {
            command.commandLine().getErr().println("flow-kafka describe: cannot read the spec file " + specFile);
            return FlowKafkaCli.FAILED;
        }
        PipelineSpec spec;
        try {
            spec = PipelineSpecLoader.fromFile(specFile);
        } catch (InvalidSpecException e) {
            command.commandLine().getErr().println("flow-kafka describe: " + specFile + " is not a valid spec:\n"
                    + e.getMessage());
            return FlowKafkaCli.FAILED;
        }
        List<SpecProblem> errors = SpecFiles.errorsWithoutUserClasses(spec);
        if (!errors.isEmpty()) {
            command.commandLine().getErr().println("flow-kafka describe: " + specFile + " is not a valid spec:");
            errors.forEach(p -> command.commandLine().getErr().println("  " + p));
            return FlowKafkaCli.FAILED;
        }
        PipelineGraph graph = PipelineGraph.of(spec);
        command.commandLine().getOut().print(format == Format.mermaid ? graph.mermaid() : graph.text());
        command.commandLine().getOut().flush();
        return FlowKafkaCli.OK;
    }
}
