package io.flowkafka.internal.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.RowFunction;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.metrics.TaskMeters;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

/** {@link InstanceReport}: what the status page shows of one task. */
class InstanceReportTest {
    static final Schema EVENT = SchemaBuilder.record("E").namespace("report").fields().requiredString("user")
            .endRecord();

    private static PipelineSpec spec() {
        return PipelineSpec.builder("p").stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(() -> (RowFunction) (m, o, ctx) -> { }))
                .build();
    }

    /** A task whose thread last fetched offset 1,000 and committed 999: what Kafka Streams' metadata says. */
    private static TaskMetadata fetchedUpTo(TopicPartition tp) {
        return new TaskMetadata() {
            @Override
            public TaskId taskId() {
                return new TaskId(1, 0);
            }

            @Override
            public Set<TopicPartition> topicPartitions() {
                return Set.of(tp);
            }

            @Override
            public Map<TopicPartition, Long> committedOffsets() {
                return Map.of(tp, 999L);
            }

            @Override
            public Map<TopicPartition, Long> endOffsets() {
                return Map.of(tp, 1_000L);
            }

            @Override
            public Optional<Long> timeCurrentIdlingStarted() {
                return Optional.empty();
            }
        };
    }

    @Test
    void shouldShowTheConsumersLagNotTheDistanceToTheLastFetchedRecord() {
        // before: input_lag was end offset minus committed, where the end offset is the last record the thread
        // fetched: about one fetch, however far behind the task was
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        double[] consumerLag = {250_000};
        Gauge.builder(TaskMeters.INPUT_LAG, consumerLag, l -> l[0])
                .tags("pipeline", "p", "computation", "count", "partition", "0").register(meters);
        InstanceReport report = new InstanceReport("p", new InstanceReport.Identity("i", "h", ""),
                PipelineCompiler.compile(spec(), "", false), "app", null, new StatusBoard(), meters, null,
                () -> "RUNNING", Set.of("read", "count"));
        TaskMetadata task = fetchedUpTo(new TopicPartition("p.events", 0));
        assertThat(report.task(task, "count", 0, Map.of(), List.of()).get("input_lag").asLong()).isEqualTo(250_000L);
        consumerLag[0] = Double.NaN; // not fetched yet: what the metadata says
        assertThat(report.task(task, "count", 0, Map.of(), List.of()).get("input_lag").asLong()).isEqualTo(1L);
    }
}
