package io.flowkafka.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * The pipeline's name alone, for the commands that talk to an instance's HTTP server and not to Kafka
 * ({@code read-states}, {@code delete-states}): they check the instance runs this pipeline. The cluster options
 * these commands once required are still accepted, hidden, and said to be unused, so that scripts keep working.
 */
final class PipelineOption {
    @Option(names = {"-p", "--pipeline"}, required = true, paramLabel = "NAME",
            description = "the pipeline's name (the spec's \"name\"); the instance must run it")
    String pipeline;

    @Option(names = {"-b", "--bootstrap-servers"}, hidden = true)
    @Nullable String bootstrapServers;

    @Option(names = "--application-id-prefix", hidden = true)
    @Nullable String applicationIdPrefix;

    @Option(names = "--topic-prefix", hidden = true)
    @Nullable String topicPrefix;

    @Option(names = "--command-config", hidden = true)
    @Nullable Path commandConfig;

    /** A sentence naming the cluster options given, which this command does not use; null when none is. */
    @Nullable String unusedOptions(String command) {
        List<String> given = new ArrayList<>();
        if (bootstrapServers != null) {
            given.add("-b");
        }
        if (applicationIdPrefix != null) {
            given.add("--application-id-prefix");
        }
        if (topicPrefix != null) {
            given.add("--topic-prefix");
        }
        if (commandConfig != null) {
            given.add("--command-config");
        }
        return given.isEmpty() ? null : "flow-kafka " + command + ": " + String.join(", ", given) + " not used: the "
                + "instance at --instance answers (drop " + (given.size() == 1 ? "it" : "them") + ")";
    }
}
