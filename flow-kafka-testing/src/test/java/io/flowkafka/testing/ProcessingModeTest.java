package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.ProcessingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code processing_mode} on {@link FlowTestDriver}. The reference, "Mode processing_mode:
 * at_least_once_consistent": "What changes: input message deduplication by message_id is
 * disabled. [...] What doesn't change: state remains consistent (that's why “consistent” is in the
 * mode name). Epoch transactionality, the Lease mechanism, and the atomicity of state updates all
 * keep working." On Kafka both modes run on exactly_once_v2, so nothing changes at all: these
 * tests run the same input through both and expect the same outputs, ids, state and dead letters.
 *
 * <pre>
 *   topic clicks-in (JSON {"user", "page"}) -> read (Source) -> stream clicks
 *     -> count (Transform, group by user, state total, processing_mode under test) -> stream counts
 * </pre>
 */
class ProcessingModeTest {
    static final Schema CLICK = SchemaBuilder.record("Click").namespace("test.modes").fields()
            .requiredString("user").requiredString("page").endRecord();
    static final Schema COUNT = SchemaBuilder.record("UserCount").namespace("test.modes").fields()
            .requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("test.modes").fields()
            .requiredLong("count").endRecord();

    /** Counts clicks per user and emits the count; page "boom" writes state and an output, then throws. */
    public static final class Counter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> total = context.getState("total");
            long count = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            boolean boom = "boom".equals(message.getPayload().get("page").toString());
            GenericRecord updated = new GenericData.Record(TOTAL);
            updated.put("count", boom ? count + 100 : count);
            total.set(updated);
            output.addMessage(context.createMessageBuilder("counts")
                    .set("user", message.getPayload().get("user").toString()).set("count", count).build());
            if (boom) {
                throw new IllegalStateException("boom after writing state and an output");
            }
        }
    }

    static PipelineSpec spec(ProcessingMode mode) {
        return PipelineSpec.builder("modes")
                .stream("raw", CLICK).stream("clicks", CLICK).stream("counts", COUNT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "clicks-in")).outputStreamIds("clicks"))
                .computation("count", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL).processingFunction(Counter::new).outputStreamIds("counts")
                        .processingMode(mode))
                .build();
    }

    /** Everything a run leaves behind. */
    record Run(List<String> ids, List<String> counts, Map<String, Optional<Long>> state, List<String> deadLetters) {
    }

    private static Run run(ProcessingMode mode) {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(mode))) {
            String[][] clicks = {{"alice", "home"}, {"alice", "boom"}, {"bob", "home"}, {"alice", "cart"},
                    {"bob", "boom"}, {"bob", "cart"}};
            for (String[] c : clicks) {
                driver.pipeSource("clicks-in", c[0], "{\"user\": \"" + c[0] + "\", \"page\": \"" + c[1] + "\"}");
            }
            List<Message> counts = driver.readStream("counts");
            Map<String, Optional<Long>> state = new LinkedHashMap<>();
            for (String user : List.of("alice", "bob")) {
                state.put(user, driver.stateForPayload("count", "total", "clicks", Map.of("user", user, "page", "x"))
                        .map(t -> (Long) t.get("count")));
            }
            List<String> dead = new ArrayList<>();
            driver.readDeadLetters().forEach(d -> dead.add(d.computation() + " " + d.errorMessage() + " @"
                    + d.sourceOffset()));
            return new Run(counts.stream().map(m -> m.getMessageId().toString()).toList(),
                    counts.stream().map(m -> m.getPayload().get("user") + "=" + m.getPayload().get("count")).toList(),
                    state, dead);
        }
    }

    @ParameterizedTest
    @EnumSource(ProcessingMode.class)
    void shouldApplyNoEffectOfAFailingCall(ProcessingMode mode) {
        Run run = run(mode);
        // neither the state write (+100) nor the output of a failed call is visible; later calls count on from the
        // committed state, so every output agrees with the state it was computed from
        assertThat(run.counts()).containsExactly("alice=1", "bob=1", "alice=2", "bob=2");
        assertThat(run.state()).containsEntry("alice", Optional.of(2L)).containsEntry("bob", Optional.of(2L));
        assertThat(run.deadLetters()).hasSize(2)
                .allSatisfy(d -> assertThat(d).startsWith("count boom after writing state and an output"));
    }

    @Test
    void shouldBehaveExactlyAsExactlyOnceOnKafka() {
        Run exactlyOnce = run(ProcessingMode.EXACTLY_ONCE);
        Run consistent = run(ProcessingMode.AT_LEAST_ONCE_CONSISTENT);
        assertThat(consistent).isEqualTo(exactlyOnce);
    }

    @Test
    void shouldShowTheModeAndTheKafkaGuarantee() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(ProcessingMode.AT_LEAST_ONCE_CONSISTENT))) {
            var gauge = driver.meterRegistry().get(FlowRuntime.GUARANTEE_METRIC).tag("computation", "count").gauge();
            assertThat(gauge.getId().getTag("processing_mode")).isEqualTo("at_least_once_consistent");
            assertThat(gauge.getId().getTag("processing_guarantee")).isEqualTo("exactly_once_v2");
        }
    }

    @Test
    void shouldAcceptTheModeOnlyOnTransformComputations() {
        // "You set the processing_mode parameter at the TTransformComputation level in the spec."
        PipelineSpec onSource = PipelineSpec.builder("modes")
                .stream("raw", CLICK).stream("clicks", CLICK)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "clicks-in")).outputStreamIds("clicks")
                        .processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT))
                .build();
        assertThatThrownBy(() -> FlowTestDriver.create(onSource)).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("processing_mode at_least_once_consistent is set on Source computation 'read', "
                        + "but it applies only to Transform computations");
    }
}
