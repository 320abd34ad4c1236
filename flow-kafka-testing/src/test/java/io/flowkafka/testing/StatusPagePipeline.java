package io.flowkafka.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The pipeline the status page tests run: a source computation reading clicks from a 2-partition topic, a counter
 * with state, event-time timers and a key visitor (2 partitions), a Kafka sink; and what the tests need around it (instances with the
 * operations server on any free port, clicks, GETs of the server's JSON).
 */
final class StatusPagePipeline {
    static final Schema CLICK = SchemaBuilder.record("Click").namespace("status.it").fields()
            .requiredString("user").requiredLong("ts").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("status.it").fields()
            .requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("status.it").fields()
            .requiredLong("count").endRecord();
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private StatusPagePipeline() {
    }

    private static final long EXPIRE_NANOS = Duration.ofHours(1).toNanos();

    /** Counts clicks per user; sets a timer an hour (event time) after each click. */
    public static final class Counter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            StateAccessor<GenericRecord> total = context.getState("total");
            long count = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            GenericRecord updated = new GenericData.Record(TOTAL);
            updated.put("count", count);
            total.set(updated);
            output.addMessage(context.createMessageBuilder("counts").set("user", user).set("count", count).build());
            output.addTimer(message.getEventTimestamp() + EXPIRE_NANOS, message.getEventTimestamp()); // stays pending
        }
    }

    static PipelineSpec spec(String pipeline, String in, String out) {
        return PipelineSpec.builder(pipeline)
                .stream("raw_clicks", CLICK)
                .stream("clicks", CLICK)
                .stream("counts", COUNT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_clicks", "KafkaSource", Map.of("topics", in, "event_timestamp_column", "ts"))
                        .outputStreamIds("clicks"))
                .computation("count", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL).desiredPartitionCount(2)
                        .processingFunction(Counter::new)
                        .timer("expire", Map.of("time_type", "event_time"))
                        .keyVisitorStream("audit", Map.of("period", "10s", "finite", false))
                        .outputStreamIds("counts")
                        .sink("counts_out", "KafkaSink", List.of("counts"), Map.of("topic", out, "key_column", "user")))
                .build();
    }

    /** Creates and starts an instance with its own state directory and the operations server on any free port. */
    static FlowRuntime start(KafkaCluster cluster, PipelineSpec spec, Path stateRoot, String name) throws IOException {
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createDirectories(stateRoot.resolve(name)).toString());
        props.put("commit.interval.ms", "100");
        props.put("flow.http.port", "0");
        props.put("flow.status.interval.ms", "500");
        FlowRuntime runtime = FlowRuntime.create(spec, props);
        runtime.start();
        return runtime;
    }

    static void sendClicks(KafkaCluster cluster, String topic, int n) {
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                String user = "user" + (i % 7);
                producer.send(new ProducerRecord<>(topic, i % 2, user, "{\"user\":\"" + user + "\",\"ts\":"
                        + System.currentTimeMillis() + "}"));
            }
        }
    }

    static String url(FlowRuntime runtime, String path) {
        InetSocketAddress a = runtime.httpAddress().orElseThrow();
        return "http://" + a.getHostString() + ":" + a.getPort() + path;
    }

    /** GETs {@code path} of the runtime's server and parses it; null if it does not answer 200 now. */
    static JsonNode getJson(FlowRuntime runtime, String path) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url(runtime, path)))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The instance ids of a /status.json view. */
    static Set<String> instances(JsonNode view) {
        Set<String> ids = new HashSet<>();
        view.path("instances").forEach(i -> ids.add(i.path("instance").asText()));
        return ids;
    }

    /** The tasks (computation/partition) of every live instance of a view. */
    static Set<String> tasks(JsonNode view) {
        Set<String> tasks = new HashSet<>();
        view.path("instances").forEach(i -> i.path("tasks").forEach(t -> tasks.add(t.path("computation").asText()
                + "/" + t.path("partition").asInt())));
        return tasks;
    }
}
