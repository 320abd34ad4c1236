package io.flowkafka.internal.compiler;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.internal.drain.DrainCondition;
import io.flowkafka.internal.source.ServiceLogScan;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

/** How a service-log source compiles: no source topic, its tasks from a control topic, a store per table topic. */
class ServiceLogCompileTest {
    private static final Schema ROW = SchemaBuilder.record("Row").namespace("slc").fields().requiredString("key")
            .endRecord();

    /** Does nothing. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static PipelineSpec spec() {
        return PipelineSpec.builder("slc").stream("events", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .desiredPartitionCount(3)
                        .externalStateManager(ExternalStateManagerSpec.of("/table", ROW)))
                .computation("log", c -> c.kind(ComputationKind.SOURCE).processingFunction(Noop::new)
                        .desiredPartitionCount(5)
                        .source("rows", "TServiceLogSource", Map.of("table", "/table")))
                .build();
    }

    @Test
    void shouldGiveAServiceLogDesiredPartitionCountTasksThroughAControlTopicAndAStoreOverItsTable() {
        CompiledPipeline compiled = PipelineCompiler.compile(spec(), "p-", false);
        assertThat(compiled.sourceTopics()).containsExactly("in");
        assertThat(compiled.internalTopics()).containsEntry("p-slc.control.log", 5);
        assertThat(compiled.partitionCounts().of("log")).isEqualTo(5);
        TopologyDescription d = compiled.topology().describe();
        assertThat(d.globalStores()).extracting(g -> g.source().topicSet())
                .containsExactly(java.util.Set.of("p-slc.external.table"));
        assertThat(d.subtopologies()).flatExtracting(TopologyDescription.Subtopology::nodes)
                .filteredOn(n -> n instanceof TopologyDescription.Processor)
                .flatExtracting(n -> ((TopologyDescription.Processor) n).stores())
                .contains(ServiceLogScan.storeName("log"));
    }

    @Test
    void shouldNameTheSourceAndTheFixWhenItsTableHasNoManager() {
        PipelineSpec spec = PipelineSpec.builder("slc").stream("rows", ROW)
                .computation("log", c -> c.kind(ComputationKind.SOURCE).processingFunction(Noop::new)
                        .source("rows", "TServiceLogSource", Map.of("table", "/tabel")))
                .build();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PipelineCompiler.compile(spec, "", false))
                .hasMessageContaining("service-log source 'rows' of computation 'log' reads table '/tabel'")
                .hasMessageContaining("fix:");
    }

    /** A service log of a manager's table, read by computation 'log' with {@code strategy}. */
    private static PipelineSpec timedLog(WatermarkStrategy strategy) {
        Schema timed = SchemaBuilder.record("Row").namespace("slc").fields().requiredString("key").requiredLong("ts")
                .endRecord();
        return PipelineSpec.builder("slc").stream("events", timed).stream("rows", timed)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .externalStateManager(ExternalStateManagerSpec.of("/table", timed)))
                .computation("log", c -> c.kind(ComputationKind.SOURCE).processingFunction(Noop::new)
                        .watermarkStrategy(strategy).source("rows", "TServiceLogSource", Map.of("table", "/table")))
                .build();
    }

    /** Docs/code audit: the column was checked, then never read (the rows carry the cycle's timestamps). */
    @Test
    void shouldRejectAnEventTimestampColumnOnAServiceLogSource() {
        PipelineSpec spec = timedLog(WatermarkStrategy.DEFAULT.withTimestampColumn("ts"));
        assertThat(spec.validate()).filteredOn(p -> p.severity()
                == SpecProblem.Severity.ERROR).singleElement().satisfies(p -> {
                    assertThat(p.computation()).isEqualTo("log");
                    assertThat(p.field())
                            .isEqualTo("watermark_strategy.event_timestamp_assigner.column");
                    assertThat(p.message())
                            .contains("gives its rows their timestamps itself");
                });
    }

    /** Spec audit: alignment pauses Kafka partitions only; a service log's reader was never held, only holding. */
    @Test
    void shouldRejectWatermarkAlignmentOnAServiceLogSource() {
        PipelineSpec spec = timedLog(WatermarkStrategy.DEFAULT.withAlignment("g", Duration.ofMinutes(1)));
        assertThat(spec.validate()).filteredOn(p -> p.severity() == SpecProblem.Severity.ERROR).singleElement()
                .satisfies(p -> {
                    assertThat(p.computation()).isEqualTo("log");
                    assertThat(p.field()).isEqualTo("watermark_strategy.watermark_alignment");
                    assertThat(p.message()).contains("TServiceLogSource source 'rows'", "cannot pace it");
                });
    }

    @Test
    void shouldNotLetADrainWaitOnTheControlTopicOfAComputationReadingOnlyServiceLogs() {
        PipelineSpec spec = spec();
        CompiledPipeline compiled = PipelineCompiler.compile(spec, "p-", false);
        DrainCondition drain = new DrainCondition(spec, compiled, "p-", "app", Map.of(), 100);
        assertThat(drain.topics()).doesNotContainKey("p-slc.control.log").containsKey("p-slc.events");
    }
}
