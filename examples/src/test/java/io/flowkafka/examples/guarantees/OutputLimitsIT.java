package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Output limits measured on a real broker (DESIGN.md: a per-output-stream bound on what is written but not yet
 * consumed): once a stream's backlog, measured from its end offsets and the application's committed offsets, is over
 * {@code flow.output.limit.records.<stream>}, the timer-stream group writing to it is held back (reference 004:
 * "handing out ready timers pauses for that stream's whole group ... other groups go on"), and the gauges say so.
 * The test driver tests block a stream by hand ({@code TimerSemanticsTest}); this one lets the runtime measure.
 */
@WithKafka
class OutputLimitsIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("LEvent").namespace("limits").fields()
            .requiredString("key").requiredLong("ts").optionalString("cmd").endRecord();
    static final Schema FIRED = SchemaBuilder.record("LFired").namespace("limits").fields()
            .requiredString("key").requiredString("stream").endRecord();
    private static final long MS = 1_000_000L;

    /** {@code audit <n>}: n messages on stream audit; {@code add <timer stream> <trigger ms> <event ms>}. */
    public static final class AuditOrRemind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            Object cmd = message.getPayload().get("cmd");
            if (cmd == null) {
                return;
            }
            String[] c = cmd.toString().split(" ");
            String key = message.getPayload().get("key").toString();
            if (c[0].equals("audit")) {
                for (int i = 0; i < Integer.parseInt(c[1]); i++) {
                    output.addMessage(context.createMessageBuilder("audit").set("key", key).set("stream", "-").build());
                }
            } else if (c[0].equals("add")) {
                output.addTimer(c[1], Long.parseLong(c[2]) * MS, Long.parseLong(c[3]) * MS);
            }
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("fired").set("key", timer.getKey().get("key").toString())
                    .set("stream", timer.getStreamId()).build());
        }
    }

    @Test
    @Timeout(180)
    void shouldHoldTheGroupWritingToAStreamWhoseMeasuredBacklogIsOverItsLimitAndLetOthersGoOn(KafkaCluster cluster,
            TestNames names) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        // t_wall (real time) writes to audit, which nobody reads; t_a (event time, waits on a) writes only to fired,
        // the sink's stream (an output without streams_dependency depends on every timer stream)
        PipelineSpec spec = PipelineSpec.builder(names.name("limits"))
                .stream("raw", EVENT).stream("a", EVENT).stream("fired", FIRED).stream("audit", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                                .withTimestampColumn("ts"))
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("a"))
                .computation("timers", c -> c.inputStreamIds("a")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(AuditOrRemind::new).outputStreamIds("fired", "audit")
                        .timer("t_a", Map.of("streams", List.of("a")))
                        .timer("t_wall", Map.of("time_type", "real_time"))
                        .streamsDependency("audit", List.of("t_wall"))
                        .sink("out", "KafkaSink", List.of("fired"), Map.of("topic", output, "key_column", "key")))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "limits").toString());
        props.put("commit.interval.ms", "100");
        props.put("flow.output.limit.records.audit", "50");
        Properties pp = cluster.clientProperties();
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (FlowRuntime runtime = FlowRuntime.create(spec, props);
                KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
                KafkaConsumer<String, String> fired = FlowRuntimeIT.consumer(cluster, output)) {
            runtime.start();
            send(producer, input, "k0", 100, "audit 60");
            Await.until(Duration.ofMinutes(1), "audit measured over its limit",
                    () -> gauge(runtime, "flow.output.blocked") == 1.0);
            assertThat(gauge(runtime, "flow.output.backlog")).as("60 records and their transaction markers")
                    .isGreaterThan(50);

            // t_wall is due as soon as it is added; t_a once the watermark of a passes 1000 ms
            send(producer, input, "kw", 200, "add t_wall " + (System.currentTimeMillis() - 1_000) + " 200");
            send(producer, input, "ka", 300, "add t_a 1000 300");
            send(producer, input, "x", 5_000, null);
            List<String> seen = new ArrayList<>();
            Await.until(Duration.ofMinutes(1), "t_a fired", () -> {
                fired.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.key() + ":" + r.value()));
                return seen.stream().anyMatch(s -> s.startsWith("ka:"));
            });
            // the step that fired t_a would have fired the due t_wall too (or an earlier one had); a later timer's
            // output, in a later transaction of the same partition, comes after both
            send(producer, input, "kb", 5_100, "add t_a 6000 5100");
            send(producer, input, "y", 10_000, null);
            Await.until(Duration.ofMinutes(1), "a later t_a fired", () -> {
                fired.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.key() + ":" + r.value()));
                return seen.stream().anyMatch(s -> s.startsWith("kb:"));
            });
            assertThat(seen).as("t_wall's group is held; t_a's goes on").containsExactly(
                    "ka:{\"key\":\"ka\",\"stream\":\"t_a\"}", "kb:{\"key\":\"kb\",\"stream\":\"t_a\"}");
            assertThat(gauge(runtime, "flow.output.blocked")).as("still over its limit").isEqualTo(1.0);
        }
    }

    private static double gauge(FlowRuntime runtime, String name) {
        var g = runtime.meterRegistry().find(name).tag("stream", "audit").gauge();
        return g == null ? Double.NaN : g.value();
    }

    private static void send(KafkaProducer<String, String> producer, String topic, String key, long tsMs, String cmd)
            throws Exception {
        producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"ts\":" + tsMs
                + (cmd == null ? "" : ",\"cmd\":\"" + cmd + "\"") + "}")).get();
    }
}
