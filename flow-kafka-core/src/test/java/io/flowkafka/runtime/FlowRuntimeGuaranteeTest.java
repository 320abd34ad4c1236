package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.internal.runtime.GuaranteeReport;
import io.flowkafka.internal.runtime.StreamsProperties;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.ProcessingMode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * What guarantee each computation runs with, and where a user sees it. DESIGN.md:
 * "processing_mode: at_least_once_consistent runs on exactly_once_v2: on Kafka the input dedup it
 * exists to skip costs nothing extra, while Kafka Streams' at_least_once would let state run ahead
 * of offsets (not "consistent")".
 */
class FlowRuntimeGuaranteeTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    /** Does nothing. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    /** Does nothing, in batches. */
    public static final class NoopBatch implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
        }
    }

    private static PipelineSpec spec() {
        return PipelineSpec.builder("modes").stream("events", EVENT).stream("fast", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT))
                .computation("batch", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .outputStreamIds("fast").processingFunction(NoopBatch::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .allowBatchingWithRelaxedGuarantees(true).maxBatchSize(64))
                .build();
    }

    private static Properties props() {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        return p;
    }

    @Test
    void shouldRunEveryModeOnExactlyOnceV2() {
        for (String other : List.of("at_least_once", "exactly_once")) {
            Properties p = props();
            p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, other);
            assertThatThrownBy(() -> FlowRuntime.create(spec(), p)).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("Invalid value " + other + " for configuration processing.guarantee")
                    .hasMessageContaining("flow-kafka runs every computation on exactly_once_v2, whatever its "
                            + "processing_mode")
                    .hasMessageContaining("choose processing_mode per Transform computation in the spec");
        }
        Properties explicit = props();
        explicit.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        try (FlowRuntime runtime = FlowRuntime.create(spec(), explicit)) {
            assertThat(runtime.streamsProperties().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG))
                    .isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
        }
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props())) {
            assertThat(runtime.streamsProperties().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG))
                    .as("the default").isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
        }
    }

    @Test
    void shouldShortenTheRestoreConsumersFetchWaitUnlessTheUserSetsOne() {
        String restore = StreamsConfig.restoreConsumerPrefix("fetch.max.wait.ms");
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props())) {
            assertThat(runtime.streamsProperties().get(restore)).isEqualTo(StreamsProperties.RESTORE_FETCH_MAX_WAIT_MS);
            assertThat(new StreamsConfig(runtime.streamsProperties()).getRestoreConsumerConfigs("c"))
                    .as("what Kafka Streams gives its restore consumer").containsEntry("fetch.max.wait.ms", "50");
            assertThat(new StreamsConfig(runtime.streamsProperties()).getMainConsumerConfigs("g", "c", 0))
                    .as("the main consumer keeps the Kafka default").doesNotContainKey("fetch.max.wait.ms");
        }
        Properties mainOnly = props();
        mainOnly.put(StreamsConfig.mainConsumerPrefix("fetch.max.wait.ms"), "300");
        try (FlowRuntime runtime = FlowRuntime.create(spec(), mainOnly)) {
            assertThat(new StreamsConfig(runtime.streamsProperties()).getRestoreConsumerConfigs("c"))
                    .as("main.consumer. does not reach the restore consumer").containsEntry("fetch.max.wait.ms", "50");
        }
        for (String key : List.of("fetch.max.wait.ms", StreamsConfig.consumerPrefix("fetch.max.wait.ms"), restore)) {
            Properties p = props();
            p.put(key, "300");
            try (FlowRuntime runtime = FlowRuntime.create(spec(), p)) {
                assertThat(new StreamsConfig(runtime.streamsProperties()).getRestoreConsumerConfigs("c"))
                        .as("the user's " + key).containsEntry("fetch.max.wait.ms", "300");
            }
        }
    }

    @Test
    void shouldGiveKafkaStreamsProducersLargerCompressedBatchesUnlessTheUserSetsThem() {
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props())) {
            assertThat(new StreamsConfig(runtime.streamsProperties()).getProducerConfigs("c"))
                    .as("what Kafka Streams gives its producers")
                    .containsEntry("batch.size", "262144").containsEntry("compression.type", "lz4");
            StreamsConfig config = new StreamsConfig(runtime.streamsProperties());
            assertThat(config.getMainConsumerConfigs("g", "c", 0)).as("producer settings only")
                    .doesNotContainKeys("batch.size", "compression.type");
            assertThat(config.getRestoreConsumerConfigs("c")).doesNotContainKeys("batch.size", "compression.type");
            assertThat(config.getAdminConfigs("c")).doesNotContainKeys("batch.size", "compression.type");
        }
        for (String prefix : List.of("", StreamsConfig.producerPrefix(""))) {
            Properties p = props();
            p.put(prefix + "batch.size", "32768");
            try (FlowRuntime runtime = FlowRuntime.create(spec(), p)) {
                assertThat(new StreamsConfig(runtime.streamsProperties()).getProducerConfigs("c"))
                        .as("the user's " + prefix + "batch.size")
                        .containsEntry("batch.size", "32768").containsEntry("compression.type", "lz4");
            }
            p = props();
            p.put(prefix + "compression.type", "zstd");
            try (FlowRuntime runtime = FlowRuntime.create(spec(), p)) {
                assertThat(new StreamsConfig(runtime.streamsProperties()).getProducerConfigs("c"))
                        .as("the user's " + prefix + "compression.type")
                        .containsEntry("compression.type", "zstd").containsEntry("batch.size", "262144");
            }
        }
    }

    @Test
    void shouldTagEachComputationWithItsModeAndGuarantee() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props(), meters)) {
            List<Gauge> gauges = List.copyOf(meters.find(FlowRuntime.GUARANTEE_METRIC).gauges());
            assertThat(gauges).hasSize(3).allSatisfy(g -> {
                assertThat(g.value()).isEqualTo(1.0);
                assertThat(g.getId().getTag("pipeline")).isEqualTo("modes");
                assertThat(g.getId().getTag("processing_guarantee")).isEqualTo("exactly_once_v2");
            });
            Gauge count = meters.get(FlowRuntime.GUARANTEE_METRIC).tag("computation", "count").gauge();
            assertThat(count.getId().getTag("processing_mode")).isEqualTo("at_least_once_consistent");
            assertThat(count.getId().getTag("kind")).isEqualTo("Transform");
            assertThat(count.getId().getTag("relaxed_batching")).isEqualTo("false");
            Gauge read = meters.get(FlowRuntime.GUARANTEE_METRIC).tag("computation", "read").gauge();
            assertThat(read.getId().getTag("processing_mode")).isEqualTo("exactly_once");
            Gauge batch = meters.get(FlowRuntime.GUARANTEE_METRIC).tag("computation", "batch").gauge();
            assertThat(batch.getId().getTag("relaxed_batching")).isEqualTo("true");
        }
    }

    @Test
    void shouldSayAtStartWhatEachComputationRunsWith() {
        assertThat(GuaranteeReport.summary(spec())).isEqualTo("pipeline 'modes' runs every computation on Kafka "
                + "Streams exactly_once_v2; processing_mode exactly_once: [read, batch], at_least_once_consistent: "
                + "[count] (at_least_once_consistent behaves as exactly_once here: on Kafka the input dedup it would "
                + "skip is the transactional offset commit, which costs nothing extra); SwiftMap batching with relaxed "
                + "guarantees (outputs with several parents, ids from the parent set, no id order per key downstream): "
                + "[batch (max_batch_size 64, max_batch_delay 100ms)]");
    }
}
