package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.HealthHandler;
import io.flowkafka.runtime.PrometheusEndpoint;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The meters a Prometheus user expects (issue 27), on a real broker: a source, a keyed computation with state, an
 * event-time timer and an outbox sink. Each per-task meter exists tagged {@code pipeline}, {@code computation} and
 * {@code partition} and moves (timers fire, the input lag falls to 0 once caught up, epochs commit, a bad record is
 * counted as a dead letter); the Prometheus handler serves them; the health handler says UP while the pipeline runs
 * and DOWN after it closed; and closing the runtime leaves no per-task series behind.
 */
@WithKafka
class MetricsIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("MEvent").namespace("metrics").fields()
            .requiredString("key").requiredLong("ts").optionalString("cmd").endRecord();
    static final Schema FIRED = SchemaBuilder.record("MFired").namespace("metrics").fields()
            .requiredString("key").requiredLong("count").endRecord();
    static final Schema COUNT = SchemaBuilder.record("MCount").namespace("metrics").fields()
            .requiredLong("count").endRecord();
    private static final long MS = 1_000_000L;
    private static final long FAR_MS = 4_000_000_000_000L;

    /**
     * Counts messages per key in state and sets an event-time timer 1 s after each; {@code fail} throws (a dead
     * letter), {@code far} sets a timer that never fires in this test.
     */
    public static final class CountAndRemind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            Object cmd = message.getPayload().get("cmd");
            if (cmd != null && cmd.toString().equals("fail")) {
                throw new IllegalStateException("a bad record, on purpose");
            }
            StateAccessor<GenericRecord> state = context.getState("count");
            long count = state.get().map(r -> (Long) r.get("count")).orElse(0L) + 1;
            GenericRecord next = new GenericData.Record(COUNT);
            next.put("count", count);
            state.set(next);
            long ts = (Long) message.getPayload().get("ts");
            output.addTimer("remind", (cmd != null && cmd.toString().equals("far") ? FAR_MS : ts + 1_000) * MS,
                    ts * MS);
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            long count = context.getState("count").get().map(r -> (Long) r.get("count")).orElse(0L);
            output.addMessage(context.createMessageBuilder("fired").set("key", timer.getKey().get("key").toString())
                    .set("count", count).build());
        }
    }

    @Test
    @Timeout(240)
    void shouldExposeEveryTaskMeterWithItsTagsServeThemToPrometheusAndRemoveThemAtClose(KafkaCluster cluster,
            TestNames names) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        String pipeline = names.name("metrics");
        PipelineSpec spec = PipelineSpec.builder(pipeline)
                .stream("raw", EVENT).stream("a", EVENT).stream("fired", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                                .withTimestampColumn("ts"))
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("a"))
                .computation("count", c -> c.inputStreamIds("a").desiredPartitionCount(1)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .state("count", COUNT)
                        .processingFunction(CountAndRemind::new).outputStreamIds("fired")
                        .timer("remind", Map.of("streams", List.of("a")))
                        .sink("out", "TKafkaSink", List.of("fired"), Map.of("topic", output)))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "metrics").toString());
        props.put("commit.interval.ms", "100");
        Properties pp = cluster.clientProperties();
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        HttpClient http = HttpClient.newHttpClient();
        FlowRuntime runtime = FlowRuntime.create(spec, props, prometheus);
        server.createContext("/metrics", PrometheusEndpoint.of(runtime));
        server.createContext("/health", new HealthHandler(runtime));
        server.start();
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
                KafkaConsumer<String, String> fired = FlowRuntimeIT.consumer(cluster, output)) {
            assertThat(get(http, base + "/health").statusCode()).as("not started: DOWN").isEqualTo(503);
            runtime.start();
            long now = System.currentTimeMillis();
            for (int i = 0; i < 20; i++) {
                send(producer, input, "f" + i, now, "far");
            }
            send(producer, input, "k0", now, null);
            send(producer, input, "bad", now, "fail");
            send(producer, input, "k1", now + 5_000, null); // the watermark passes k0's timer
            Await.until(Duration.ofMinutes(1), "k0's timer fired and was delivered through the outbox",
                    () -> fired.poll(Duration.ofMillis(200)).count() > 0);

            MeterRegistry r = runtime.meterRegistry();
            Await.until(Duration.ofMinutes(1), "the timers fired were counted",
                    () -> r.find("flow.timers.fired").tags(task(pipeline, "count")).counter() != null
                            && r.find("flow.timers.fired").tags(task(pipeline, "count")).counter().count() >= 1);
            Await.until(Duration.ofMinutes(1), "the bad record counted as a dead letter",
                    () -> r.get("flow.dead_letters").tags("pipeline", pipeline, "computation", "count").counter()
                            .count() == 1);
            assertThat(r.get("flow.dead_letters").tags("pipeline", pipeline, "computation", "read").counter().count())
                    .as("registered for every computation, at 0").isZero();
            Await.until(Duration.ofMinutes(1), "the source and the keyed computation caught up: input lag 0",
                    () -> gauge(r, pipeline, "flow.input.lag_records", "read") == 0.0
                            && gauge(r, pipeline, "flow.input.lag_records", "count") == 0.0);
            Await.until(Duration.ofMinutes(1), "the 20 far timers counted as pending",
                    () -> gauge(r, pipeline, "flow.timers.pending", "count") >= 20);
            Await.until(Duration.ofMinutes(1), "the watermark lag measured",
                    () -> !Double.isNaN(gauge(r, pipeline, "flow.watermark.lag_seconds", "count", "kind", "event")));
            assertThat(gauge(r, pipeline, "flow.watermark.lag_seconds", "count", "kind", "system"))
                    .as("the system watermark follows the wall clock").isBetween(0.0, 60.0);
            assertThat(r.get("flow.epoch.commit").tag("pipeline", pipeline).timer().count())
                    .as("epochs committed").isPositive();
            Gauge backlog = r.get("flow.outbox.backlog_records").tags("pipeline", pipeline, "computation", "count",
                    "sink", "out").gauge();
            Await.until(Duration.ofMinutes(1), "the outbox measured and delivered: backlog 0",
                    () -> backlog.value() == 0.0);
            assertThat(r.getMeters()).as("Kafka Streams' own metrics, bound and tagged with the pipeline")
                    .anyMatch(m -> m.getId().getName().startsWith("kafka.stream")
                            && pipeline.equals(m.getId().getTag("pipeline")));

            HttpResponse<String> scrape = get(http, base + "/metrics");
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.headers().firstValue("Content-Type")).hasValueSatisfying(
                    t -> assertThat(t).startsWith("text/plain; version=0.0.4"));
            assertThat(scrape.body()).contains("flow_input_lag_records{", "flow_watermark_lag_seconds{",
                    "flow_timers_pending{", "flow_timers_fired_total{", "flow_dead_letters_total{",
                    "flow_epoch_commit_seconds_count{", "flow_outbox_backlog_records{", "kafka_stream_")
                    .contains("computation=\"count\"", "partition=\"0\"", "kind=\"event\"");

            HttpResponse<String> up = get(http, base + "/health");
            assertThat(up.statusCode()).isEqualTo(200);
            assertThat(up.body()).contains("\"status\":\"UP\"");
        } finally {
            runtime.close();
        }
        try {
            MeterRegistry r = runtime.meterRegistry();
            for (String name : List.of("flow.input.lag_records", "flow.watermark.lag_seconds", "flow.timers.pending",
                    "flow.timers.fired", "flow.epoch.commit", "flow.dead_letters")) {
                assertThat(r.find(name).meters()).as(name + " removed at close").isEmpty();
            }
            assertThat(r.getMeters()).as("Kafka Streams' metrics unbound at close")
                    .noneMatch(m -> m.getId().getName().startsWith("kafka."));
            assertThat(get(http, base + "/metrics").body()).doesNotContain("flow_input_lag_records{");
            HttpResponse<String> down = get(http, base + "/health");
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).contains("\"status\":\"DOWN\"", "\"reason\":\"pipeline '" + pipeline + "' is ");
        } finally {
            server.stop(0);
        }
    }

    private static String[] task(String pipeline, String computation) {
        return new String[] {"pipeline", pipeline, "computation", computation, "partition", "0"};
    }

    /** The value of the one task gauge {@code name} of {@code computation}'s partition 0; NaN if absent. */
    private static double gauge(MeterRegistry r, String pipeline, String name, String computation, String... extra) {
        Collection<Meter> found = r.find(name).tags(task(pipeline, computation)).tags(extra).meters();
        if (found.size() != 1 || !(found.iterator().next() instanceof Gauge g)) {
            return Double.NaN;
        }
        return g.value();
    }

    private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void send(KafkaProducer<String, String> producer, String topic, String key, long tsMs, String cmd)
            throws Exception {
        producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"ts\":" + tsMs
                + (cmd == null ? "" : ",\"cmd\":\"" + cmd + "\"") + "}")).get();
    }
}
