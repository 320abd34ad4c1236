package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dynamic spec shared by every instance (issue 27): two instances of one pipeline in this JVM, each with its own
 * state directory, on the in-JVM broker. A change made through one reaches the other within 2 s; a bad change is
 * rejected naming its field, and nothing changes anywhere (nothing is published); an instance started later comes up
 * with the changed spec; two concurrent changes from two instances both survive; a document an instance cannot
 * apply is reported in its status while the previous settings stay.
 */
@WithKafka
@Timeout(180)
class DynamicSpecIT {
    private static final Schema SEEN = SchemaBuilder.record("Seen").namespace("dynamic.it").fields()
            .requiredLong("n").endRecord();
    /** Instances apply a change within about a second; the bound is for a loaded machine, not a timing check. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    @TempDir
    Path stateRoot;

    private final List<FlowRuntime> runtimes = new ArrayList<>();

    /** A visitor-only computation: nothing to process, two key-visitor streams to reconfigure. */
    public static final class Auditor implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static PipelineSpec spec(String pipeline) {
        return PipelineSpec.builder(pipeline).stream("unused", SEEN)
                .computation("auditor", c -> c.groupBy("hash", ColumnType.UINT64, null)
                        .processingFunction(Auditor::new).state("seen", SEEN).desiredPartitionCount(2)
                        .keyVisitorStream("v", Map.of("period", "1h", "finite", false))
                        .keyVisitorStream("w", Map.of("period", "1h", "finite", false)))
                .build();
    }

    private FlowRuntime instance(KafkaCluster cluster, String pipeline, String name) throws Exception {
        return instance(cluster, pipeline, name, new Properties());
    }

    private FlowRuntime instance(KafkaCluster cluster, String pipeline, String name, Properties extra)
            throws Exception {
        Properties props = new Properties();
        props.putAll(extra);
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createDirectories(stateRoot.resolve(name)).toString());
        props.put("commit.interval.ms", "100");
        FlowRuntime runtime = FlowRuntime.create(spec(pipeline), props);
        runtimes.add(runtime);
        runtime.start();
        return runtime;
    }

    @AfterEach
    void closeRuntimes() {
        runtimes.forEach(FlowRuntime::close);
    }

    private static KeyVisitorSettings settings(FlowRuntime runtime, String visitor) {
        return runtime.keyVisitorSettings("auditor", visitor);
    }

    private static Map<String, Object> visitorChange(String visitor, Map<String, ?> settings) {
        return Map.of("computations", Map.of("auditor", Map.of("key_visitor_streams", Map.of(visitor, settings))));
    }

    private static long endOffset(KafkaCluster cluster, String topic) throws Exception {
        Admin admin = cluster.admin();
        return admin.listOffsets(Map.of(new TopicPartition(topic, 0), OffsetSpec.latest())).all()
                .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, 0)).offset();
    }

    @Test
    void shouldReachEveryInstanceWithinTheBoundAndRejectABadChangeWhole(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("dyn");
        FlowRuntime a = instance(cluster, pipeline, "a");
        FlowRuntime b = instance(cluster, pipeline, "b");
        assertThat(a.dynamicSpecTopic()).isEqualTo(pipeline + ".dynamic-spec");
        var description = cluster.admin().describeTopics(List.of(a.dynamicSpecTopic())).allTopicNames()
                .get(30, TimeUnit.SECONDS).get(a.dynamicSpecTopic());
        assertThat(description.partitions()).hasSize(1);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, a.dynamicSpecTopic());
        assertThat(cluster.admin().describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                .get("cleanup.policy").value()).isEqualTo("compact");

        a.reconfigureKeyVisitor("auditor", "v", Map.of("period", "5m", "max_scan_rows_per_iteration", 77));

        assertThat(settings(a, "v").period()).as("applied on A when reconfigure returns").isEqualTo(Duration.ofMinutes(5));
        Await.until(BOUND, "instance B applies the change made through A",
                () -> settings(b, "v").period().equals(Duration.ofMinutes(5))
                        && settings(b, "v").maxScanRowsPerIteration() == 77);
        assertThat(b.dynamicSpec()).isEqualTo(a.dynamicSpec());

        long end = endOffset(cluster, a.dynamicSpecTopic());
        assertThatThrownBy(() -> b.reconfigure(Map.of("computations", Map.of("auditor", Map.of("key_visitor_streams",
                Map.of("v", Map.of("period", "later"), "nope", Map.of("period", "1m")))))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dynamic_spec.computations.auditor.key_visitor_streams.v.period")
                .hasMessageContaining("has no key-visitor stream 'nope'");
        assertThat(endOffset(cluster, a.dynamicSpecTopic())).as("nothing published").isEqualTo(end);
        for (FlowRuntime r : List.of(a, b)) {
            assertThat(settings(r, "v").period()).as("nothing changed").isEqualTo(Duration.ofMinutes(5));
            assertThat(settings(r, "v").maxScanRowsPerIteration()).isEqualTo(77);
        }

        FlowRuntime c = instance(cluster, pipeline, "c");
        assertThat(settings(c, "v").period()).as("a later instance starts with the current dynamic spec")
                .isEqualTo(Duration.ofMinutes(5));
        assertThat(settings(c, "v").maxScanRowsPerIteration()).isEqualTo(77);
        assertThat(settings(c, "w").period()).as("static").isEqualTo(Duration.ofHours(1));
    }

    @Test
    void shouldSayWhenTheSharedSpecReplacesAChangeMadeBeforeStart(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("early");
        FlowRuntime a = instance(cluster, pipeline, "a");
        a.reconfigureKeyVisitor("auditor", "v", Map.of("period", "5m"));
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createDirectories(stateRoot.resolve("b")).toString());
        FlowRuntime b = FlowRuntime.create(spec(pipeline), props);
        runtimes.add(b);
        b.reconfigureKeyVisitor("auditor", "w", Map.of("period", "7m")); // before start: this instance only
        b.start();
        assertThat(b.dynamicSpec()).as("the shared document wins").isEqualTo(a.dynamicSpec());
        assertThat(settings(b, "w").period()).isEqualTo(Duration.ofHours(1));
        assertThat(b.status()).filteredOn(e -> e.path().equals("/dynamic_spec/rejected")).singleElement()
                .satisfies(e -> assertThat(e.message()).contains("before start()", "period=7m", "after start()"));
    }

    @Test
    void shouldKeepBothOfTwoConcurrentChangesFromTwoInstances(KafkaCluster cluster, TestNames names) throws Exception {
        String pipeline = names.name("dyn-race");
        FlowRuntime a = instance(cluster, pipeline, "a");
        // an application.id set by hand (or a CLI run without the instances' prefix) writes the same document
        Properties own = new Properties();
        own.put("application.id", pipeline + "-by-hand");
        FlowRuntime b = instance(cluster, pipeline, "b", own);
        for (int round = 1; round <= 3; round++) {
            int rows = 100 + round;
            CyclicBarrier together = new CyclicBarrier(2);
            CompletableFuture<Void> fromA = CompletableFuture.runAsync(() -> {
                await(together);
                a.reconfigureKeyVisitor("auditor", "v", Map.of("max_scan_rows_per_iteration", rows));
            });
            CompletableFuture<Void> fromB = CompletableFuture.runAsync(() -> {
                await(together);
                b.reconfigureKeyVisitor("auditor", "w", Map.of("buffer_row_limit", rows));
            });
            CompletableFuture.allOf(fromA, fromB).get(60, TimeUnit.SECONDS);
            for (FlowRuntime r : List.of(a, b)) {
                Await.until(BOUND, "round " + round + ": both changes in effect on every instance",
                        () -> settings(r, "v").maxScanRowsPerIteration() == rows
                                && settings(r, "w").bufferRowLimit() == rows);
            }
        }
        FlowRuntime c = instance(cluster, pipeline, "c");
        assertThat(settings(c, "v").maxScanRowsPerIteration()).isEqualTo(103);
        assertThat(settings(c, "w").bufferRowLimit()).isEqualTo(103);
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldReportADocumentItCannotApplyAndKeepThePreviousSettings(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("dyn-bad-doc");
        FlowRuntime a = instance(cluster, pipeline, "a");
        a.reconfigureKeyVisitor("auditor", "v", Map.of("period", "5m"));
        // what a newer build could write: a setting this build does not know
        String newer = "{\"version\": 7, \"dynamic_spec\": {\"computations\": {\"auditor\": {\"key_visitor_streams\": "
                + "{\"v\": {\"period\": \"9m\", \"warp_factor\": 9}, \"w\": {\"period\": \"3m\"}}}}}}";
        Properties p = cluster.clientProperties();
        try (var producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(a.dynamicSpecTopic(), 0, pipeline.getBytes(StandardCharsets.UTF_8),
                    newer.getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
        StatusError error = Await.untilValue(BOUND, "the rejected document in A's status", () -> a.status().stream()
                .filter(s -> s.path().equals("/dynamic_spec/rejected")).findFirst().orElse(null), Objects::nonNull);
        assertThat(error.message()).contains("version 7").contains("key_visitor_streams.v.warp_factor");
        assertThat(settings(a, "v").period()).as("the previous settings stay").isEqualTo(Duration.ofMinutes(5));
        assertThat(settings(a, "w").period()).isEqualTo(Duration.ofHours(1));

        // an instance that starts now does not run with the static settings: it applies what it can of version 7
        FlowRuntime b = instance(cluster, pipeline, "b");
        assertThat(settings(b, "w").period()).as("the entry it can apply").isEqualTo(Duration.ofMinutes(3));
        assertThat(settings(b, "v").period()).as("the entry it cannot apply: static").isEqualTo(Duration.ofHours(1));
        assertThat(b.status()).filteredOn(s -> s.path().equals("/dynamic_spec/rejected")).singleElement()
                .satisfies(s -> assertThat(s.message()).contains("version 7").contains("applied except")
                        .contains("key_visitor_streams.v.warp_factor"));

        assertThatThrownBy(() -> a.reconfigureKeyVisitor("auditor", "w", Map.of("period", "2m")))
                .as("a change merged into the unknown setting is rejected naming it")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("warp_factor");
        Map<String, Object> remove = new HashMap<>();
        remove.put("warp_factor", null);
        a.reconfigureKeyVisitor("auditor", "v", remove);
        assertThat(settings(a, "v").period()).isEqualTo(Duration.ofMinutes(9));
        assertThat(a.status()).noneMatch(s -> s.path().equals("/dynamic_spec/rejected"));
        Await.until(BOUND, "B applies the corrected document", () -> settings(b, "v").period().equals(Duration.ofMinutes(9))
                && b.status().stream().noneMatch(s -> s.path().equals("/dynamic_spec/rejected")));
        assertThat(settings(b, "w").period()).isEqualTo(Duration.ofMinutes(3));
    }
}
