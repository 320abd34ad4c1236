package io.flowkafka.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.api.Visit;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.kafka.common.serialization.Serdes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ComputationCalls}: the runtime's call code outside a topology returns a call's effects
 * (with the runtime's ids) and applies none of them.
 */
class ComputationCallsTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("calls").fields()
            .requiredString("user").requiredString("cmd").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("calls").fields()
            .requiredLong("n").endRecord();

    /** {@link #COUNT}'s fields under another name, with a property, as a generated class's schema may have. */
    static final Schema COUNT_WITH_PROPS = new Schema.Parser().parse("""
            {"type": "record", "name": "CountV", "namespace": "other", "fields": [
              {"name": "n", "type": {"type": "long", "note": "generated"}}]}""");

    /** Counts per user in state {@code count}, emits the count, and obeys {@code cmd}. */
    public static final class Counter implements RowFunction {
        /** A state accessor kept between calls, as a Kafka Streams user keeps a store (command {@code keep}). */
        private io.flowkafka.api.StateAccessor<GenericRecord> kept;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (message.getPayload().get("cmd").toString().equals("use-kept")) {
                kept.get();
            }
            var state = context.getState("count");
            if (message.getPayload().get("cmd").toString().equals("keep")) {
                kept = state;
            }
            long n = state.get().map(r -> (Long) r.get("n")).orElse(0L) + 1;
            state.set(new GenericRecordBuilder(COUNT).set("n", n).build());
            switch (message.getPayload().get("cmd").toString()) {
                case "timers" -> {
                    output.addTimer(10, 5);
                    output.addTimer(10, 3); // same trigger, smaller event: replaces
                    output.addTimer(10, 4);
                    output.addTimer(20, 20);
                }
                case "fail" -> {
                    output.addTimer(10, 5);
                    throw new IllegalStateException("boom");
                }
                case "undeclared" -> context.getState("nope");
                case "serde" -> context.getState("count", Serdes.Long());
                case "wrong-schema" -> state.set(message.getPayload());
                case "millis" -> {
                    output.addTimer(1_767_225_600_000L + 1_800_000L, 1_767_225_600_000L); // a Kafka timestamp + 30 min
                    output.addTimer(1_767_225_600_000L + 3_600_000L, 1_767_225_600_000L);
                }
                case "same-fields" -> state.set(new GenericRecordBuilder(COUNT_WITH_PROPS).set("n", 100L).build());
                case "clear" -> state.clear();
                default -> {
                }
            }
            output.addMessage(context.createMessageBuilder("counts").set("user", message.getPayload().get("user"))
                    .set("n", n).build());
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("counts").set("user", "v").set("n", 0L).build());
        }
    }

    static PipelineSpec spec() {
        Schema counts = SchemaBuilder.record("Counts").namespace("calls").fields()
                .requiredString("user").requiredLong("n").endRecord();
        return PipelineSpec.builder("p").stream("raw", EVENT).stream("events", EVENT).stream("counts", counts)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("count", COUNT).timer("t", Map.of()).keyVisitorStream("sweep", Map.of())
                        .processingFunction(Counter::new).outputStreamIds("counts"))
                .build();
    }

    /** Committed state by (user, state name), as a caller keeps it. */
    private final Map<String, byte[]> committed = new HashMap<>();
    private ComputationCalls calls;
    private ComputationCalls.Call call;
    private RowFunction function;

    @BeforeEach
    void start() {
        calls = ComputationCalls.of(spec(), "count");
        call = calls.newCall(new ComputationCalls.Host() {
            @Override
            public long currentTimeNanos() {
                return 42L;
            }

            @Override
            public long inputWatermark(String streamId) {
                return Long.MIN_VALUE;
            }

            @Override
            public long minInputWatermark() {
                return Long.MIN_VALUE;
            }

            @Override
            public byte @Nullable [] committedState(GenericRecord key, String stateName) {
                return committed.get(key.get("user") + "/" + stateName);
            }
        }, 0, 1);
        function = (RowFunction) calls.newFunction();
    }

    private ComputationCalls.Effects send(String user, String cmd, MessageId id) {
        GenericRecord payload = new GenericRecordBuilder(EVENT).set("user", user).set("cmd", cmd).build();
        return call.runMessage(function, id, "events", calls.keyOf("events", payload), payload, 7L, 8L);
    }

    private void apply(ComputationCalls.Effects effects) {
        for (ComputationCalls.StateWrite w : effects.stateWrites()) {
            String row = w.key().get("user") + "/" + w.stateName();
            if (w.cleared()) {
                committed.remove(row);
            } else {
                committed.put(row, w.bytes());
            }
        }
    }

    @Test
    void shouldReturnTheEffectsWithTheRuntimesIdsAndApplyNone() {
        MessageId input = MessageId.fromHex("0102");
        ComputationCalls.Effects e = send("alice", "", input);
        assertThat(e.outputs()).singleElement().satisfies(o -> {
            assertThat(o.messageId()).isEqualTo(MessageIds.output(List.of(input), MessageIds.computationTag("count"), 0));
            assertThat(o.parentIds()).containsExactly(input);
            assertThat(o.eventTimestamp()).isEqualTo(7L);
            assertThat(o.systemTimestamp()).isEqualTo(42L);
            assertThat(o.payload().get("n")).isEqualTo(1L);
        });
        assertThat(e.stateWrites()).singleElement().satisfies(w -> {
            assertThat(w.stateName()).isEqualTo("count");
            assertThat(w.key().get("user")).isEqualTo("alice");
            assertThat(w.value()).hasValueSatisfying(v -> assertThat(((GenericRecord) v).get("n")).isEqualTo(1L));
        });
        assertThat(committed).as("nothing applied").isEmpty();
        assertThat(send("alice", "", input).stateWrites().get(0).value()).as("the buffer was dropped")
                .hasValueSatisfying(v -> assertThat(((GenericRecord) v).get("n")).isEqualTo(1L));

        apply(e);
        assertThat(send("alice", "", input).outputs().get(0).payload().get("n")).as("committed state is read")
                .isEqualTo(2L);
        GenericRecord alice = calls.keyOf("events", new GenericRecordBuilder(EVENT).set("user", "alice").set("cmd", "")
                .build());
        java.util.Optional<GenericRecord> read = call.inspect(alice, c -> c.getState("count").get());
        assertThat(read).hasValueSatisfying(v -> assertThat(v.get("n")).isEqualTo(1L));
    }

    @Test
    void shouldMergeTimersWithinACallAsTheTimerStoreAndDeriveTheirIds() {
        MessageId input = MessageId.fromHex("01");
        List<Timer> timers = send("bob", "timers", input).timers();
        assertThat(timers).extracting(Timer::getTriggerTimestamp, Timer::getEventTimestamp)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(10L, 3L),
                        org.assertj.core.groups.Tuple.tuple(20L, 20L));
        assertThat(timers.get(0).getMessageId()).isEqualTo(MessageIds.derive(input, MessageIds.timerTag("count"), 1));
        assertThat(timers.get(0).getKey().get("user")).isEqualTo("bob");
        assertThat(timers.get(0).getSystemTimestamp()).isEqualTo(42L);
    }

    @Test
    void shouldRefuseASerdeForAStateDeclaredWithAnAvroSchema() {
        // before: accepted; the serde's bytes then broke every Avro read of the row
        assertThatThrownBy(() -> send("bob", "serde", MessageId.fromHex("01")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("state 'count' of computation 'count' has an Avro schema: read it with "
                        + "getState(name)");
    }

    @Test
    void shouldRefuseAStateAccessorKeptFromAnEarlierCallInsteadOfUsingItsKey() {
        // before: the kept accessor read and wrote alice's row in bob's call, silently
        apply(send("alice", "keep", MessageId.fromHex("01")));
        assertThatThrownBy(() -> send("bob", "use-kept", MessageId.fromHex("02")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the accessor of state 'count' of computation 'count' was obtained in an earlier call and "
                        + "stands for that call's key; get it again in each call instead of keeping it in a field");
    }

    @Test
    void shouldLetAStateAccessorKeptFromAnEarlierCallOfTheSameKeyBeUsed() {
        // the key is the same (a computation without group-by keeps one): the accessor still stands for it
        apply(send("alice", "keep", MessageId.fromHex("01")));
        apply(send("alice", "use-kept", MessageId.fromHex("02")));
    }

    @Test
    void shouldPropagateFailuresUnchangedAndLeaveNoEffect() {
        assertThatThrownBy(() -> send("bob", "fail", MessageId.fromHex("01"))).isInstanceOf(IllegalStateException.class)
                .hasMessage("boom");
        assertThatThrownBy(() -> send("bob", "undeclared", MessageId.fromHex("02")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("computation 'count' declares no state 'nope'; declared states are [count] (add it under "
                        + "'states' in the spec)");
        ComputationCalls.Effects next = send("bob", "", MessageId.fromHex("03"));
        assertThat(next.timers()).isEmpty();
        assertThat(next.outputs().get(0).payload().get("n")).isEqualTo(1L);
        assertThatThrownBy(() -> call.context().getKey()).hasMessageContaining("valid only during a process-function call");
    }

    @Test
    void shouldRefuseAStateRecordOfAnotherSchemaNamingTheState() {
        // first-hour audit: a record of the input's schema was encoded by position into the state's row
        assertThatThrownBy(() -> send("bob", "wrong-schema", MessageId.fromHex("01")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("state 'count' of computation 'count' is declared with schema calls.Count [n], but set() "
                        + "got a record of calls.Event [user, cmd]; build it with the state's newRecord()");
        ComputationCalls.Effects same = send("bob", "same-fields", MessageId.fromHex("02"));
        assertThat(same.stateWrites()).singleElement().satisfies(w -> assertThat(w.value())
                .hasValueSatisfying(v -> assertThat(((GenericRecord) v).get("n")).isEqualTo(100L)));
    }

    @Test
    void shouldWarnOnceOfATimestampInMilliseconds() {
        // first-hour audit: a timer 30 minutes ahead, in milliseconds, fires at the next watermark, silently
        PrintStream original = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            send("bob", "millis", MessageId.fromHex("01"));
            send("bob", "millis", MessageId.fromHex("02"));
            send("bob", "timers", MessageId.fromHex("03"));
        } finally {
            System.setErr(original);
        }
        List<String> warnings = bytes.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> l.contains("looks like milliseconds")).toList();
        assertThat(warnings).singleElement().asString()
                .contains("computation 'count': addTimer's trigger 1767227400000 looks like milliseconds since the "
                        + "epoch (2026-01-01T00:30:00Z)")
                .contains("so it reads as 1970-01-01T00:29:27.227400Z: multiply milliseconds by 1_000_000");
    }

    @Test
    void shouldGiveVisitsTheRuntimesIdsAndRules() {
        GenericRecord key = calls.keyOf("events", new GenericRecordBuilder(EVENT).set("user", "u").set("cmd", "").build());
        MessageId id = calls.visitId("sweep", key, 3, 2);
        assertThat(id).isEqualTo(MessageIds.visit(MessageIds.visitOrigin("count", "sweep", 2), 3,
                KeyCodec.of(calls.computation().groupBySchema(), "count").encode(key)));
        assertThatThrownBy(() -> call.runVisit(function, id, "sweep", key, 3, 0)).hasMessageContaining(
                "computation 'count' emitted to 'counts' from onVisit of key-visitor stream 'sweep', but "
                        + "streams_dependency.counts does not list 'sweep'");
        assertThatThrownBy(() -> calls.visitId("swepe", key, 0, 0)).hasMessageContaining("has no key-visitor stream");
    }

    @Test
    void shouldSeedStateThroughTheFunctionsAccessors() {
        GenericRecord key = calls.keyOf("events", new GenericRecordBuilder(EVENT).set("user", "carol").set("cmd", "")
                .build());
        List<ComputationCalls.StateWrite> writes = call.seed(key,
                c -> c.getState("count").set(new GenericRecordBuilder(COUNT).set("n", 9L).build()));
        assertThat(committed).isEmpty();
        apply(new ComputationCalls.Effects(List.of(), List.of(), writes));
        assertThat(send("carol", "", MessageId.fromHex("01")).outputs().get(0).payload().get("n")).isEqualTo(10L);
        assertThatThrownBy(() -> ComputationCalls.of(spec(), "cuont")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no computation 'cuont'; its computations are [read, count]");
    }
}
