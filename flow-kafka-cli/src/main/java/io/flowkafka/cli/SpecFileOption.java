package io.flowkafka.cli;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.spec.SpecProblem;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * The {@code --spec} option of the commands that need the pipeline's spec file, and its loading: the file is
 * validated the way the runtime would, minus what needs the application's own classes (the CLI runs without the
 * user's jar, so a {@code processing_function} class that cannot be loaded here is not an error here; the runtime
 * checks it at start). Every other problem is printed with its computation and field.
 */
final class SpecFileOption {
    @Option(names = {"-s", "--spec"}, required = true, paramLabel = "FILE",
            description = "the pipeline's spec file (JSON, or YAML if it ends in .yaml/.yml)")
    Path file;

    /**
     * Loads and validates the file; prints why not to {@code err}.
     *
     * @param command the command's name, for the messages
     * @return the spec, or null when it cannot be read or is not valid (exit 1)
     */
    @Nullable PipelineSpec load(String command, PrintWriter err) {
        if (!Files.isReadable(file)) {
            err.println("flow-kafka " + command + ": cannot read the spec file " + file);
            return null;
        }
        PipelineSpec spec;
        try {
            spec = PipelineSpecLoader.fromFile(file);
        } catch (InvalidSpecException e) {
            err.println("flow-kafka " + command + ": " + file + " is not a valid spec:\n" + e.getMessage());
            return null;
        }
        List<SpecProblem> errors = spec.validate().stream()
                .filter(p -> p.severity() == SpecProblem.Severity.ERROR)
                .filter(p -> !(p.field().equals("processing_function") && p.message().contains("cannot be loaded")))
                .toList();
        if (!errors.isEmpty()) {
            err.println("flow-kafka " + command + ": " + file + " is not a valid spec:");
            errors.forEach(p -> err.println("  " + p));
            return null;
        }
        return spec;
    }
}
