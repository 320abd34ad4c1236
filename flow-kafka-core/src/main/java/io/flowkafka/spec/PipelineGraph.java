package io.flowkafka.spec;

import io.flowkafka.internal.compiler.PipelineCompiler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A pipeline as a graph, the analog of Kafka Streams' {@code Topology#describe()} at the level of Flow's spec:
 * computations (kind, partitions, states, timers, key visitors), the streams between them (one writer, its
 * readers), the sources that feed them and the sinks they write. {@link #text()} is for a terminal, {@link #mermaid()}
 * for a Markdown page or an issue. Built from the spec alone, so the same graph is printed by a running instance,
 * the CLI and a test. Immutable and thread-safe.
 */
public final class PipelineGraph {
    private static final Pattern NOT_ID = Pattern.compile("[^A-Za-z0-9_]");

    private final PipelineSpec spec;

    private PipelineGraph(PipelineSpec spec) {
        this.spec = spec;
    }

    /**
     * The graph of a spec.
     *
     * @param spec the pipeline spec; validated or not
     * @return its graph
     */
    public static PipelineGraph of(PipelineSpec spec) {
        return new PipelineGraph(Objects.requireNonNull(spec, "spec"));
    }

    /** Stream id to the ids of the computations that read it, in spec order. */
    private Map<String, List<String>> readers() {
        Map<String, List<String>> readers = new LinkedHashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            for (String s : c.inputStreamIds()) {
                readers.computeIfAbsent(s, k -> new ArrayList<>()).add(c.id());
            }
        }
        return readers;
    }

    /**
     * The graph as indented text: one block per computation, then the streams with their writer and readers.
     *
     * @return the text, lines ending in {@code \n}
     */
    public String text() {
        StringBuilder out = new StringBuilder();
        out.append("pipeline ").append(spec.name()).append(": ").append(spec.computations().size())
                .append(" computation(s), ").append(spec.streams().size()).append(" stream(s)\n");
        for (ComputationSpec c : spec.computations().values()) {
            out.append("  computation ").append(c.id()).append(" (").append(shape(c)).append(", ")
                    .append(c.processingMode().name().toLowerCase(Locale.ROOT)).append(")\n");
            for (SourceSpec s : c.sourceStreams()) {
                out.append("    source  ").append(s.streamId()).append(" <- ").append(s.sourceClassName());
                List<String> topics = topics(s);
                if (!topics.isEmpty()) {
                    out.append(" ").append(topics);
                }
                out.append('\n');
            }
            for (String in : c.inputStreamIds()) {
                out.append("    input   ").append(in).append(writer(in).map(w -> " <- " + w).orElse("")).append('\n');
            }
            if (!c.groupBySchema().isEmpty()) {
                out.append("    key     ").append(c.groupBySchema().stream().map(GroupByColumn::name).toList())
                        .append('\n');
            }
            if (!c.states().isEmpty()) {
                out.append("    states  ").append(c.states().keySet()).append('\n');
            }
            for (TimerStreamSpec t : c.timers()) {
                out.append("    timer   ").append(t.id()).append('\n');
            }
            for (KeyVisitorStreamSpec v : c.keyVisitorStreams().values()) {
                out.append("    visitor ").append(v.id()).append(" (period ").append(duration(v.settings().period()))
                        .append(")\n");
            }
            for (String o : c.outputStreamIds()) {
                List<String> r = readers().getOrDefault(o, List.of());
                out.append("    output  ").append(o).append(r.isEmpty() ? "" : " -> " + String.join(", ", r))
                        .append('\n');
            }
            for (SinkSpec k : c.sinks()) {
                out.append("    sink    ").append(k.id()).append(" (").append(k.sinkClassName()).append(") <- ")
                        .append(String.join(", ", k.inputStreamIds()));
                Object topic = k.parameters().get("topic");
                if (topic != null) {
                    out.append(" -> topic ").append(topic);
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    /**
     * The graph as a Mermaid flowchart ({@code flowchart LR}): sources and sinks as rounded nodes, computations as
     * boxes, each stream an edge labelled with its id.
     *
     * @return the Mermaid text, lines ending in {@code \n}
     */
    public String mermaid() {
        StringBuilder out = new StringBuilder("flowchart LR\n");
        Map<String, List<String>> readers = readers();
        for (ComputationSpec c : spec.computations().values()) {
            String node = "c_" + id(c.id());
            StringBuilder label = new StringBuilder(c.id()).append("<br/>").append(shape(c));
            if (!c.states().isEmpty()) {
                label.append("<br/>states: ").append(String.join(", ", c.states().keySet()));
            }
            if (!c.timers().isEmpty()) {
                label.append("<br/>timers: ").append(String.join(", ", c.timers().stream().map(TimerStreamSpec::id)
                        .toList()));
            }
            if (!c.keyVisitorStreams().isEmpty()) {
                label.append("<br/>visitors: ").append(String.join(", ", c.keyVisitorStreams().keySet()));
            }
            out.append("  ").append(node).append("[\"").append(quote(label.toString())).append("\"]\n");
            for (SourceSpec s : c.sourceStreams()) {
                String src = "s_" + id(c.id()) + "_" + id(s.streamId());
                List<String> topics = topics(s);
                out.append("  ").append(src).append("([\"").append(quote(s.sourceClassName()
                        + (topics.isEmpty() ? "" : "<br/>" + String.join(", ", topics)))).append("\"])\n");
                out.append("  ").append(src).append(" -->|").append(quote(s.streamId())).append("| ").append(node)
                        .append('\n');
            }
            for (SinkSpec k : c.sinks()) {
                String sink = "k_" + id(c.id()) + "_" + id(k.id());
                Object topic = k.parameters().get("topic");
                out.append("  ").append(sink).append("([\"").append(quote(k.id() + "<br/>" + k.sinkClassName()
                        + (topic == null ? "" : "<br/>" + topic))).append("\"])\n");
                out.append("  ").append(node).append(" -->|").append(quote(String.join(", ", k.inputStreamIds())))
                        .append("| ").append(sink).append('\n');
            }
        }
        for (ComputationSpec c : spec.computations().values()) {
            for (String o : c.outputStreamIds()) {
                for (String r : readers.getOrDefault(o, List.of())) {
                    out.append("  c_").append(id(c.id())).append(" -->|").append(quote(o)).append("| c_")
                            .append(id(r)).append('\n');
                }
            }
        }
        return out.toString();
    }

    private Optional<String> writer(String stream) {
        return spec.writerOf(stream).map(ComputationSpec::id);
    }

    /** The kind and the partitioning: a source computation has its source topics' partitions. */
    private static String shape(ComputationSpec c) {
        String kind = c.kind().name().toLowerCase(Locale.ROOT);
        return c.inputStreamIds().isEmpty() ? kind : kind + ", " + c.desiredPartitionCount() + " partitions";
    }

    /** A duration as a spec writes it: 90s, 5m, 1h, 2d. */
    static String duration(Duration d) {
        long s = d.toSeconds();
        if (d.toMillisPart() != 0 || s == 0) {
            return d.toMillis() + "ms";
        }
        return s % 86_400 == 0 ? s / 86_400 + "d" : s % 3_600 == 0 ? s / 3_600 + "h" : s % 60 == 0 ? s / 60 + "m"
                : s + "s";
    }

    private static List<String> topics(SourceSpec s) {
        try {
            return List.copyOf(PipelineCompiler.topicsOf(s));
        } catch (RuntimeException e) {
            return List.of(); // a source without topics (a table source, a generator)
        }
    }

    private static String id(String specId) {
        return NOT_ID.matcher(specId).replaceAll("_");
    }

    private static String quote(String label) {
        return label.replace("\"", "#quot;").replace("|", "#124;");
    }

    @Override
    public String toString() {
        return text();
    }
}
