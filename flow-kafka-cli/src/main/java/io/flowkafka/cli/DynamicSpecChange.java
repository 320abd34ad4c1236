package io.flowkafka.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.dynamic.DynamicSpecDocument;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spec.PipelineSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A change of a pipeline's dynamic spec made from the CLI ({@code set-dynamic-spec}, {@code pause}, {@code resume},
 * {@code drain}): the change is merged into the document on the {@code <pipeline>.dynamic-spec} topic, the result
 * validated against the pipeline's spec file (every problem with its field; nothing published: exit 1), the
 * difference printed, then published; every running instance applies it within about a second. Keeps the rule of
 * {@code FlowRuntime.reconfigure}: all or nothing.
 */
final class DynamicSpecChange {
    private static final ObjectMapper COMPACT = new ObjectMapper();

    private DynamicSpecChange() {
    }

    /**
     * Loads and checks the spec file, merges {@code delta} into the document on the topic, validates the result,
     * prints the difference and, unless {@code dryRun}, publishes it.
     *
     * @return the exit code
     */
    static int publish(CommandSpec command, ClusterOptions cluster, SpecFileOption specFile,
            Map<String, Object> delta, boolean dryRun) throws Exception {
        String name = command.name();
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        PipelineSpec spec = specFile.load(name, err);
        if (spec == null) {
            return FlowKafkaCli.FAILED;
        }
        if (!spec.name().equals(cluster.pipeline)) {
            err.println("flow-kafka " + name + ": " + specFile.file + " is the spec of pipeline '" + spec.name()
                    + "', not of '" + cluster.pipeline + "'");
            return FlowKafkaCli.USAGE;
        }
        String topic = DynamicSpecTopic.name(cluster.topicPrefix, cluster.pipeline);
        try (Admin admin = cluster.admin()) {
            if (!admin.listTopics().names().get().contains(topic)) {
                err.println("flow-kafka " + name + ": no topic " + topic + " on " + cluster.bootstrapServers
                        + ": start the pipeline once (it creates the topic) or check --pipeline and --topic-prefix");
                return FlowKafkaCli.NOT_FOUND;
            }
        }
        DynamicSpecDocument current = DynamicSpecTopic.read(cluster.pipeline, topic, cluster.clientProperties());
        Map<String, Object> merged = DynamicSpec.merge(current.spec(), delta);
        DynamicSpec dynamic = new DynamicSpec(spec);
        try {
            dynamic.validate(merged);
        } catch (IllegalArgumentException e) {
            err.println("flow-kafka " + name + ": rejected, nothing published: " + e.getMessage());
            return FlowKafkaCli.FAILED;
        }
        Map<String, String> before = leaves(current.spec());
        Map<String, String> after = leaves(merged);
        TreeSet<String> paths = new TreeSet<>(before.keySet());
        paths.addAll(after.keySet());
        out.println("dynamic spec of " + cluster.pipeline + " (version " + current.version() + "):");
        int changes = 0;
        for (String path : paths) {
            String a = before.get(path);
            String b = after.get(path);
            if (!Objects.equals(a, b)) {
                changes++;
                out.println("  " + path + ": " + (a == null ? "(static)" : a) + " -> " + (b == null ? "(static)" : b));
            }
        }
        if (changes == 0) {
            out.println("  no difference; nothing to publish");
            out.flush();
            return FlowKafkaCli.OK;
        }
        if (dryRun) {
            out.println("dry run: not published");
            out.flush();
            return FlowKafkaCli.OK;
        }
        try (DynamicSpecTopic published = DynamicSpecTopic.start(cluster.pipeline, topic,
                cluster.clientProperties(), dynamic, new StatusBoard())) {
            DynamicSpecDocument doc = published.publish(delta);
            out.println("published version " + doc.version() + "; every running instance applies it within ~1 s");
        }
        out.flush();
        return FlowKafkaCli.OK;
    }

    /** Every leaf of a document by its dotted path, as JSON text. */
    private static Map<String, String> leaves(Map<String, ?> doc) throws IOException {
        Map<String, String> out = new TreeMap<>();
        walk("", doc, out);
        return out;
    }

    private static void walk(String prefix, Map<String, ?> m, Map<String, String> out) throws IOException {
        for (Map.Entry<String, ?> e : m.entrySet()) {
            String path = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            if (e.getValue() instanceof Map<?, ?> inner) {
                @SuppressWarnings("unchecked")
                Map<String, ?> typed = (Map<String, ?>) inner;
                walk(path, typed, out);
            } else {
                out.put(path, COMPACT.writeValueAsString(e.getValue()));
            }
        }
    }
}
