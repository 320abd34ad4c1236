package io.flowkafka.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.TimerStreamSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The status page of a pipeline, mounted on an {@link OperationsServer}: {@code /} is one self-contained HTML file
 * (inline CSS and JavaScript, no library) that polls {@code /status.json} every 2 s and draws {@code /graph.json};
 * {@code /status.json} is the merged view of every instance (from the instances topic), {@code /graph.json} the
 * pipeline's computations, streams, sources and sinks from the spec. It keeps the rule that every instance serves the
 * same view: nothing on the page comes from this instance alone.
 */
public final class StatusPage {
    /** The classpath resource of the page. */
    static final String RESOURCE = "status-page.html";

    private static final ObjectMapper JSON = new ObjectMapper();

    private StatusPage() {
    }

    /**
     * Mounts {@code /}, {@code /status.json} and {@code /graph.json}.
     *
     * @param view the merged view of every instance, built at each request
     */
    public static void mount(OperationsServer server, PipelineSpec spec, Supplier<ObjectNode> view) {
        byte[] page = page();
        byte[] graph = bytes(graph(spec));
        server.mount("/", "text/html; charset=utf-8", () -> page);
        server.mount("/graph.json", "application/json", () -> graph);
        server.mount("/status.json", "application/json", () -> bytes(view.get()));
    }

    /** The page, read once from the classpath. */
    static byte[] page() {
        try (InputStream in = Objects.requireNonNull(StatusPage.class.getResourceAsStream(RESOURCE), RESOURCE)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The pipeline as JSON: {@code {"pipeline", "computations": [{"id", "kind", "partitions", "inputs", "outputs",
     * "sources": [{"stream", "class", "topics"}], "sinks": [{"id", "class", "inputs", "topic"}], "timers",
     * "visitors"}]}}; {@code partitions} is null for a source computation (its source topics decide).
     */
    static ObjectNode graph(PipelineSpec spec) {
        ObjectNode out = JSON.createObjectNode();
        out.put("pipeline", spec.name());
        ArrayNode computations = out.putArray("computations");
        for (ComputationSpec c : spec.computations().values()) {
            ObjectNode n = computations.addObject();
            n.put("id", c.id());
            n.put("kind", c.kind().name().toLowerCase(Locale.ROOT));
            if (c.inputStreamIds().isEmpty()) {
                n.putNull("partitions");
            } else {
                n.put("partitions", c.desiredPartitionCount());
            }
            c.inputStreamIds().forEach(n.putArray("inputs")::add);
            c.outputStreamIds().forEach(n.putArray("outputs")::add);
            ArrayNode sources = n.putArray("sources");
            for (SourceSpec s : c.sourceStreams()) {
                ObjectNode src = sources.addObject().put("stream", s.streamId()).put("class", s.sourceClassName());
                topics(s).forEach(src.putArray("topics")::add);
            }
            ArrayNode sinks = n.putArray("sinks");
            for (SinkSpec k : c.sinks()) {
                ObjectNode sink = sinks.addObject().put("id", k.id()).put("class", k.sinkClassName());
                k.inputStreamIds().forEach(sink.putArray("inputs")::add);
                Object topic = k.parameters().get("topic");
                if (topic != null) {
                    sink.put("topic", topic.toString());
                }
            }
            c.timers().stream().map(TimerStreamSpec::id).forEach(n.putArray("timers")::add);
            c.keyVisitorStreams().values().stream().map(KeyVisitorStreamSpec::id).forEach(n.putArray("visitors")::add);
        }
        return out;
    }

    private static List<String> topics(SourceSpec s) {
        try {
            return List.copyOf(PipelineCompiler.topicsOf(s));
        } catch (RuntimeException e) {
            return List.of(); // a source without topics (a table source, a generator)
        }
    }

    private static byte[] bytes(ObjectNode node) {
        try {
            return JSON.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
