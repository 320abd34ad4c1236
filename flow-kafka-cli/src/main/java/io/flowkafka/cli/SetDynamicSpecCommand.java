package io.flowkafka.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka set-dynamic-spec}: changes the dynamic spec of a running pipeline, as
 * {@code FlowRuntime.reconfigure} does from an instance: the change (a partial document; {@code null} removes a
 * setting) is merged into the document in effect, the result validated against the pipeline's spec file (every
 * problem listed with its field, nothing published: exit 1), the difference printed, then published to the
 * {@code <pipeline>.dynamic-spec} topic, from which every instance applies it within about a second. With
 * {@code --dry-run} it stops after printing the difference.
 */
@Command(name = "set-dynamic-spec", description = "Validate, show and publish a change of the dynamic spec.")
final class SetDynamicSpecCommand implements Callable<Integer> {
    private static final TypeReference<Map<String, Object>> TREE = new TypeReference<>() { };

    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin

    SpecFileOption specFile;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Change change;

    /** The change, inline or from a file. */
    static final class Change {
        @Option(names = "--change", paramLabel = "JSON",
                description = "the change, e.g. '{\"computations\": {\"c\": {\"skip_if_expression\": \"n < 0\"}}}'")
        @Nullable String json;

        @Option(names = "--change-file", paramLabel = "FILE", description = "the change as a JSON file")
        @Nullable Path file;
    }

    @Option(names = "--dry-run", description = "validate and show the difference; publish nothing")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        String text = change.json;
        if (text == null) {
            Path file = Objects.requireNonNull(change.file);
            try {
                text = Files.readString(file);
            } catch (NoSuchFileException e) {
                command.commandLine().getErr().println("flow-kafka set-dynamic-spec: --change-file " + file
                        + ": no such file");
                return FlowKafkaCli.FAILED;
            } catch (IOException e) {
                command.commandLine().getErr().println("flow-kafka set-dynamic-spec: cannot read --change-file " + file
                        + ": " + e.getMessage());
                return FlowKafkaCli.FAILED;
            }
        }
        JsonNode tree;
        try {
            tree = GetDynamicSpecCommand.JSON.readTree(text);
        } catch (JsonProcessingException e) {
            command.commandLine().getErr().println("flow-kafka set-dynamic-spec: the change is not valid JSON: "
                    + e.getOriginalMessage() + " (line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ")");
            return FlowKafkaCli.FAILED;
        }
        if (tree == null || !tree.isObject()) {
            command.commandLine().getErr().println("flow-kafka set-dynamic-spec: the change is not a JSON object: "
                    + "it is " + (tree == null || tree.isMissingNode() ? "empty" : "a JSON "
                            + tree.getNodeType().name().toLowerCase(Locale.ROOT))
                    + "; write the fields to change, e.g. '{\"paused\": true}'");
            return FlowKafkaCli.FAILED;
        }
        Map<String, Object> delta = GetDynamicSpecCommand.JSON.convertValue(tree, TREE);
        return DynamicSpecChange.publish(command, cluster, specFile, delta, dryRun);
    }
}
