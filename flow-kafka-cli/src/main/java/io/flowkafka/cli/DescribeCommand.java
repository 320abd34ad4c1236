package io.flowkafka.cli;

import io.flowkafka.spec.PipelineGraph;
import io.flowkafka.spec.PipelineSpec;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka describe}: prints a pipeline spec as a graph, as text or Mermaid ({@link PipelineGraph}), after
 * validating it ({@link SpecFileOption}); an invalid spec prints every problem with its computation and field and exits 1.
 */
@Command(name = "describe", description = "Print the pipeline as a graph: computations, streams, sources, sinks.")
final class DescribeCommand implements Callable<Integer> {
    enum Format { text, mermaid }

    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin

    SpecFileOption specFile;

    @Option(names = {"-f", "--format"}, defaultValue = "text", paramLabel = "FORMAT",
            description = "text (default) or mermaid")
    Format format;

    @Override
    public Integer call() {
        PipelineSpec spec = specFile.load("describe", command.commandLine().getErr());
        if (spec == null) {
            return FlowKafkaCli.FAILED;
        }
        PipelineGraph graph = PipelineGraph.of(spec);
        command.commandLine().getOut().print(format == Format.mermaid ? graph.mermaid() : graph.text());
        command.commandLine().getOut().flush();
        return FlowKafkaCli.OK;
    }
}
