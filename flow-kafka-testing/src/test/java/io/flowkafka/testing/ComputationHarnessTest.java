package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.util.Utf8;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ComputationHarness}: every feature on a small pipeline. Computation {@code count} (a
 * {@link RowFunction}) counts events per user and obeys commands in the events' {@code cmd}
 * field; {@code batch} is a {@link BatchFunction}; {@code swift} a SwiftMap computation with a key
 * visitor; {@code plain} a Transform computation without timers.
 */
class ComputationHarnessTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("harness").fields()
            .requiredString("user").requiredLong("amount").optionalString("cmd").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("harness").fields()
            .requiredString("user").requiredLong("total").endRecord();
    static final Schema ALERT = SchemaBuilder.record("Alert").namespace("harness").fields()
            .requiredString("user").requiredString("what").endRecord();
    static final Schema COUNT_STATE = SchemaBuilder.record("CountState").namespace("harness").fields()
            .requiredLong("count").requiredLong("sum").endRecord();
    private static final long SEC = 1_000_000_000L;

    /** Counts events per user; see the commands in {@link #onMessage}. */
    public static final class Counter implements RowFunction {
        static final List<String> LIFECYCLE = new ArrayList<>();

        @Override
        public void open(RuntimeContext context) {
            LIFECYCLE.add("open " + context.getComputationId() + " " + context.getParameters());
            try {
                context.getKey();
                LIFECYCLE.add("getKey worked outside a call");
            } catch (IllegalStateException e) {
                LIFECYCLE.add(e.getMessage());
            }
        }

        @Override
        public void close() {
            LIFECYCLE.add("close");
        }

        /**
         * Counts the event into state {@code total} and emits the new sum on {@code totals}, then
         * runs {@code cmd}: {@code timer <stream> <trigger s> <event s>}, {@code fail},
         * {@code bad-stream}, {@code bad-state}, {@code bad-type}, {@code foreign}, {@code parents},
         * {@code ets <s>}, {@code context}, {@code blob <text>}, {@code big-blob <length>}, {@code clear}.
         */
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> state = context.getState("total");
            GenericRecord s = state.getOrDefault(new GenericRecordBuilder(COUNT_STATE).set("count", 0L).set("sum", 0L).build());
            s.put("count", (Long) s.get("count") + 1);
            s.put("sum", (Long) s.get("sum") + (Long) message.getPayload().get("amount"));
            state.set(s);
            String user = message.getPayload().get("user").toString();
            Object cmd = message.getPayload().get("cmd");
            String[] c = cmd == null ? new String[] {""} : cmd.toString().split(" ");
            var total = context.createMessageBuilder("totals").set("user", user).set("total", s.get("sum"));
            switch (c[0]) {
                case "timer" -> output.addTimer(c[1], Long.parseLong(c[2]) * SEC, Long.parseLong(c[3]) * SEC);
                case "default-timer" -> output.addTimer(Long.parseLong(c[1]) * SEC);
                case "fail" -> {
                    output.addMessage(total.build());
                    output.addTimer("t", 10 * SEC, 10 * SEC);
                    throw new IllegalStateException("boom for " + user);
                }
                case "outage" -> {
                    output.addTimer("t", 10 * SEC, 10 * SEC);
                    throw new UncheckedIOException(new SocketTimeoutException("the service is down"));
                }
                case "bad-stream" -> context.createMessageBuilder("events");
                case "bad-state" -> context.getState("nope");
                case "bad-type" -> total.set("total", "not a number");
                case "foreign" -> output.addMessage(message);
                case "parents" -> output.withParentIds(List.of(message.getMessageId(), MessageId.fromHex("ff")))
                        .addMessage(total.build());
                case "earlier" -> output.withParentIds(List.of(MessageId.fromHex("ff"))).addMessage(total.build());
                case "ets" -> total.setEventTimestamp(Long.parseLong(c[1]) * SEC);
                case "context" -> output.addMessage(context.createMessageBuilder("alerts").set("user", user)
                        .set("what", "partition " + context.getPartition() + "/" + context.getPartitionCount()
                                + " limit " + context.getParameters().get("limit") + " now " + context.currentTimeNanos()
                                + " wm " + context.getInputWatermark("events") + " min " + context.getMinInputWatermark()
                                + " key " + context.getKey().get("user") + " payload "
                                + message.getPayload().get("user").getClass().getSimpleName()
                                + " ets " + message.getEventTimestamp())
                        .build());
                case "blob" -> context.getState("blob", Serdes.String()).set(c[1]);
                case "big-blob" -> context.getState("blob", Serdes.String()).set("x".repeat(Integer.parseInt(c[1])));
                case "clear" -> state.clear();
                default -> {
                }
            }
            if (!c[0].equals("bad-stream") && !c[0].equals("fail")) {
                output.addMessage(total.build());
            }
        }

        /** Reports the timer on {@code alerts}; a timer at 5 s adds one at 6 s (event 1 s). */
        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("alerts").set("user", context.getKey().get("user"))
                    .set("what", "timer " + timer.getStreamId() + " " + timer.getTriggerTimestamp() / SEC + " "
                            + timer.getEventTimestamp() / SEC)
                    .build());
            if (timer.getTriggerTimestamp() == 5 * SEC) {
                output.addTimer("t", 6 * SEC, SEC);
            }
            if (context.getKey().get("user").equals("fail")) {
                throw new IllegalStateException("timer fails");
            }
        }

        /** Pass 0: an alert (allowed); pass 1: a total (not in streams_dependency); pass 2: clears the state. */
        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            String user = context.getKey().get("user").toString();
            if (visit.getPass() == 0) {
                output.addMessage(context.createMessageBuilder("alerts").set("user", user)
                        .set("what", "visit " + visit.getStreamId() + " " + visit.getEventTimestamp()).build());
            } else if (visit.getPass() == 1) {
                output.addMessage(context.createMessageBuilder("totals").set("user", user).set("total", 0L).build());
            } else {
                context.getState("total").clear();
            }
        }
    }

    /** Sums per user, and mirrors every sum into the state of user {@code shadow} (another key). */
    public static final class Batch implements BatchFunction {
        static final List<Integer> BATCH_SIZES = new ArrayList<>();

        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            BATCH_SIZES.add(messages.size());
            for (Message m : messages) {
                StateAccessor<GenericRecord> state = context.getState("total", m.getKey());
                GenericRecord s = state.getOrDefault(new GenericRecordBuilder(COUNT_STATE).set("count", 0L).set("sum", 0L).build());
                s.put("count", (Long) s.get("count") + 1);
                s.put("sum", (Long) s.get("sum") + (Long) m.getPayload().get("amount"));
                state.set(s);
                GenericData.Record shadow = new GenericData.Record(m.getKey().getSchema());
                shadow.put("hash", 0L);
                shadow.put("user", "shadow");
                context.getState("total", shadow).set(s);
                output.addTimer(7 * SEC, 7 * SEC);
            }
        }

        @Override
        public void onTimers(List<Timer> timers, OutputCollector output, RuntimeContext context) {
            for (Timer t : timers) {
                output.addMessage(context.createMessageBuilder("totals").set("user", t.getKey().get("user"))
                        .set("total", (Long) context.getState("total").get().orElseThrow().get("sum")).build());
            }
        }

        @Override
        public void onVisits(List<Visit> visits, OutputCollector output, RuntimeContext context) {
            context.getState("total").clear();
        }
    }

    /** A SwiftMap function that tries to emit from a visit. */
    public static final class Swift implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            context.getState("total").set(new GenericRecordBuilder(COUNT_STATE).set("count", 1L).set("sum", 1L).build());
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("alerts").set("user", "x").set("what", "visit").build());
        }
    }

    /** Adds a timer though its computation has none. */
    public static final class Plain implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer(SEC);
        }
    }

    /** The streams and the source computation every test pipeline shares. */
    static PipelineSpec.Builder base() {
        return PipelineSpec.builder("h")
                .stream("raw", EVENT).stream("events", EVENT).stream("totals", TOTAL).stream("alerts", ALERT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")).outputStreamIds("events"));
    }

    static PipelineSpec spec() {
        return base().computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", COUNT_STATE).state("blob")
                        .timer("t", Map.of()).timer("nodedup", Map.of("deduplicate_equal_timestamps", false))
                        .keyVisitorStream("sweep", Map.of("names", List.of("total")))
                        .streamsDependency("alerts", List.of("events", "t", "nodedup", "sweep"))
                        .parameter("limit", 100)
                        .processingFunction(Counter::new).outputStreamIds("totals", "alerts"))
                .build();
    }

    static PipelineSpec batchSpec() {
        return base().computation("batch", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", COUNT_STATE).timer("t", Map.of())
                        .keyVisitorStream("sweep", Map.of())
                        .processingFunction(Batch::new).outputStreamIds("totals"))
                .build();
    }

    static PipelineSpec swiftSpec() {
        return base().computation("swift", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", COUNT_STATE).keyVisitorStream("sweep", Map.of())
                        .processingFunction(Swift::new).outputStreamIds("alerts"))
                .build();
    }

    static PipelineSpec plainSpec() {
        return base().computation("plain", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(Plain::new).outputStreamIds("totals"))
                .build();
    }

    private ComputationHarness count;

    @BeforeEach
    void start() {
        Counter.LIFECYCLE.clear();
        count = ComputationHarness.create(spec(), "count");
    }

    @AfterEach
    void stop() {
        count.close();
    }

    private static Map<String, Object> event(String user, long amount, String cmd) {
        return cmd == null ? Map.of("user", user, "amount", amount) : Map.of("user", user, "amount", amount, "cmd", cmd);
    }

    private HarnessResult send(String user, long amount, String cmd) {
        return count.message("events", event(user, amount, cmd), SEC);
    }

    // ------------------------------------------------------------------ creation

    @Test
    void shouldNameTheComputationsWhenTheIdIsUnknown() {
        assertThatThrownBy(() -> ComputationHarness.create(spec(), "cuont"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pipeline 'h' has no computation 'cuont'")
                .hasMessageContaining("[read, count]")
                .hasMessageContaining("ComputationHarness.create");
    }

    @Test
    void shouldRefuseAnInvalidSpec() {
        PipelineSpec invalid = PipelineSpec.builder("bad").stream("events", EVENT)
                .computation("c", c -> c.inputStreamIds("events").processingFunction(Plain::new)).build();
        assertThatThrownBy(() -> ComputationHarness.create(invalid, "c")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("group_by_schema");
    }

    @Test
    void shouldOpenTheFunctionWithTheParametersAndCloseIt() {
        assertThat(Counter.LIFECYCLE).containsExactly("open count {limit=100}",
                "the runtime context of computation 'count' is valid only during a process-function call");
        count.close();
        count.close();
        assertThat(Counter.LIFECYCLE).endsWith("close").filteredOn("close"::equals).hasSize(1);
        assertThatThrownBy(() -> send("alice", 1, null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed: after restart() use the harness it returned").hasMessageContaining("else create a new one");
    }

    // ------------------------------------------------------------------ messages, keys, state

    @Test
    void shouldComputeTheKeyAsTheRuntimeAndKeepStateBetweenCalls() {
        HarnessResult first = send("alice", 5, null);
        assertThat(first.kind()).isEqualTo(HarnessResult.InputKind.MESSAGE);
        assertThat(first.stream()).isEqualTo("events");
        GenericRecord key = count.keyOf("events", Map.of("user", "alice"));
        assertThat(first.key()).isEqualTo(key);
        assertThat(key.get("user")).isEqualTo("alice");
        assertThat((Long) key.get("hash")).isNotZero(); // farm_hash(user)
        assertThat(first.outputs()).singleElement().satisfies(o -> {
            assertThat(o.streamId()).isEqualTo("totals");
            assertThat(o.get("user")).isEqualTo("alice");
            assertThat(o.get("total")).isEqualTo(5L);
            assertThat(o.eventTimestamp()).isEqualTo(SEC);
            assertThat(o.parentIds()).containsExactly(first.inputId());
            assertThat(o.systemTimestamp()).isEqualTo(count.currentTimeNanos());
        });
        assertThat(first.stateChange("total")).hasValueSatisfying(c -> {
            assertThat(c.cleared()).isFalse();
            assertThat(c.record().get("count")).isEqualTo(1L);
        });

        HarnessResult second = send("alice", 7, null);
        assertThat(second.payloads("totals")).extracting(p -> p.get("total")).containsExactly(12L);
        send("bob", 1, null);
        assertThat(count.state("total", key)).hasValueSatisfying(s -> assertThat(s.get("sum")).isEqualTo(12L));
        assertThat(count.state("total", count.key(Map.of("hash", key.get("hash"), "user", "alice"))))
                .as("a key built from its columns").isPresent();
        assertThat(count.keys()).extracting(k -> k.get("user")).containsExactly("alice", "bob");
        assertThat(count.state("total", count.keyOf("events", Map.of("user", "carol")))).isEmpty();
    }

    @Test
    void shouldAcceptARecordPayloadAndDeliverItAsTheRuntimeDoes() {
        GenericRecord payload = new GenericRecordBuilder(EVENT).set("user", "alice").set("amount", 3L)
                .set("cmd", "context").build();
        count.setCurrentTimeNanos(123L).setInputWatermark("events", 77L);
        HarnessResult r = count.message("events", payload, 9L);
        payload.put("user", "mallory"); // the harness holds its own copy
        assertThat(r.outputs("alerts")).singleElement().satisfies(o -> assertThat(o.get("what"))
                .isEqualTo("partition 0/1 limit 100 now 123 wm 77 min 77 key alice payload Utf8 ets 9"));
        assertThat(r.outputs("alerts").get(0).payload().get("user")).isInstanceOf(Utf8.class);
        assertThat(count.keys()).extracting(k -> k.get("user")).containsExactly("alice");
        count.advanceTime(java.time.Duration.ofSeconds(2));
        assertThat(count.currentTimeNanos()).isEqualTo(123L + 2 * SEC);
    }

    @Test
    void shouldStartTheClockAtTheDefaultAndInputWatermarksAtMinValue() {
        HarnessResult r = send("alice", 1, "context");
        long start = ComputationHarness.DEFAULT_CLOCK_START.getEpochSecond() * SEC;
        assertThat(r.outputs("alerts").get(0).get("what").toString())
                .contains("now " + start + " wm " + Long.MIN_VALUE + " min " + Long.MIN_VALUE);
    }

    @Test
    void shouldCheckInputsAndPayloads() {
        assertThatThrownBy(() -> count.message("totals", Map.of("user", "a", "total", 1L), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream 'totals' is not an input of computation 'count'; its inputs are [events]");
        assertThatThrownBy(() -> count.message("events", Map.of("user", "a", "amuont", 1L), 0))
                .hasMessageContaining("stream 'events' has no field 'amuont'; its fields are [user, amount, cmd]");
        assertThatThrownBy(() -> count.message("events", Map.of("user", "a"), 0))
                .hasMessageContaining("field 'amount' was not given and has no default");
        assertThatThrownBy(() -> count.message("events", new GenericRecordBuilder(TOTAL).set("user", "a")
                .set("total", 1L).build(), 0)).hasMessageContaining("is not a record of stream 'events'");
        assertThatThrownBy(() -> count.message("events", Map.of("user", "a", "amount", "one"), 0))
                .hasMessageContaining("the payload of stream 'events' is not a valid record");
        assertThat(send("alice", 1, null).failed()).isFalse(); // an int for a long field is widened
        assertThat(count.message("events", Map.of("user", "a", "amount", 1), 0).failed()).isFalse();
        assertThatThrownBy(() -> count.state("total", new GenericRecordBuilder(TOTAL).set("user", "a").set("total", 1L)
                .build())).hasMessageContaining("has columns [user, total] but keys of computation 'count' have [hash, user]");
        assertThatThrownBy(() -> count.key(Map.of("user", "a"))).hasMessageContaining("field 'hash' was not given");
    }

    @Test
    void shouldReadSeedAndClearState() {
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        count.putState("total", alice, new GenericRecordBuilder(COUNT_STATE).set("count", 10L).set("sum", 100L).build());
        assertThat(send("alice", 1, null).payloads("totals")).extracting(p -> p.get("total")).containsExactly(101L);

        HarnessResult blob = send("alice", 0, "blob hello");
        assertThat(blob.stateChange("blob")).hasValueSatisfying(c -> assertThat(c.value()).contains("hello"));
        assertThat(count.state("blob", alice, Serdes.String())).contains("hello");
        assertThatThrownBy(() -> count.state("blob", alice)).hasMessageContaining(
                "state 'blob' of computation 'count' has no Avro schema: read it with state(name, key, serde)");
        assertThatThrownBy(() -> count.state("nope", alice))
                .hasMessageContaining("computation 'count' declares no state 'nope'; declared states are [total, blob]");

        HarnessResult cleared = send("alice", 0, "clear");
        assertThat(cleared.stateChange("total")).hasValueSatisfying(c -> assertThat(c.cleared()).isTrue());
        assertThat(count.state("total", alice)).isEmpty();
        assertThat(count.state("blob", alice, Serdes.String())).contains("hello");
    }

    @Test
    void shouldRestartWithANewFunctionInstanceKeepingStateTimersWatermarksClockAndIds() {
        send("alice", 5, "blob hello");
        send("bob", 1, "timer t 20 20");
        count.advanceWatermark("t", 10 * SEC).size();
        count.setInputWatermark("events", 77L).setCurrentTimeNanos(123L);
        HarnessResult before = send("alice", 1, null);
        Counter.LIFECYCLE.clear();

        ComputationHarness old = count;
        count = old.restart();
        assertThat(count).isNotSameAs(old);
        assertThat(Counter.LIFECYCLE).as("the old instance closed, a new one opened")
                .containsExactly("close", "open count {limit=100}",
                        "the runtime context of computation 'count' is valid only during a process-function call");
        assertThatThrownBy(() -> old.message("events", event("a", 1, null), 0)).hasMessageContaining("is closed");
        assertThatThrownBy(old::restart).hasMessageContaining("is closed");
        // before: reads and seeds of the closed harness were accepted, silently lost to the new one
        GenericRecord bob = old.keyOf("events", Map.of("user", "bob"));
        assertThatThrownBy(() -> old.putState("total", bob, count.state("total",
                count.keyOf("events", Map.of("user", "alice"))).orElseThrow()))
                .hasMessageContaining("is closed: after restart() use the harness it returned");
        assertThatThrownBy(() -> old.state("total", bob)).hasMessageContaining("is closed");

        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        assertThat(count.state("total", alice)).hasValueSatisfying(st -> assertThat(st.get("sum")).isEqualTo(6L));
        assertThat(count.state("blob", alice, Serdes.String())).contains("hello");
        assertThat(count.keys()).extracting(k -> k.get("user")).containsExactly("alice", "bob");
        assertThat(count.pendingTimers()).extracting(HarnessTimer::getStreamId, HarnessTimer::getTriggerTimestamp)
                .containsExactly(tuple("t", 20 * SEC));
        assertThat(count.watermark("t")).isEqualTo(10 * SEC);
        assertThat(count.currentTimeNanos()).isEqualTo(123L);
        assertThat(count.failures()).isEmpty();

        HarnessResult after = send("alice", 2, "context");
        assertThat(after.payloads("totals")).extracting(p -> p.get("total")).containsExactly(8L);
        assertThat(after.outputs("alerts").get(0).get("what").toString()).contains("now 123 wm 77 min 77");
        // before: a misspelt stream or state gave an empty result, which an isEmpty() assertion took for a pass
        assertThatThrownBy(() -> after.outputs("alert")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stream 'alert' is not an output of computation 'count'; its outputs are [totals, alerts]");
        assertThatThrownBy(() -> after.stateChange("totl")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("computation 'count' declares no state 'totl'; its states are [total, blob]");
        assertThat(after.inputId()).as("ids go on from the old harness's").isNotEqualTo(before.inputId())
                .isNotIn(before.outputs().stream().map(HarnessResult.Output::messageId).toList());
        assertThat(count.advanceWatermark("t", 21 * SEC)).singleElement()
                .satisfies(r -> assertThat(r.key().get("user")).isEqualTo("bob"));

        // The ids are those of a harness that never restarted.
        try (ComputationHarness straight = ComputationHarness.create(spec(), "count")) {
            straight.message("events", event("alice", 5, "blob hello"), SEC);
            straight.message("events", event("bob", 1, "timer t 20 20"), SEC);
            straight.advanceWatermark("t", 10 * SEC);
            straight.message("events", event("alice", 1, null), SEC);
            HarnessResult same = straight.message("events", event("alice", 2, "context"), SEC);
            assertThat(same.inputId()).isEqualTo(after.inputId());
            assertThat(same.outputs()).extracting(HarnessResult.Output::messageId)
                    .isEqualTo(after.outputs().stream().map(HarnessResult.Output::messageId).toList());
        }
    }

    @Test
    void shouldSetParentsAndEventTimestamps() {
        HarnessResult r = send("alice", 1, "parents");
        assertThat(r.outputs()).extracting(HarnessResult.Output::parentIds)
                .containsExactly(List.of(r.inputId(), MessageId.fromHex("ff")), List.of(r.inputId()));
        assertThat(send("alice", 1, "ets 42").outputs()).extracting(HarnessResult.Output::eventTimestamp)
                .containsExactly(42 * SEC);
        assertThat(r.outputs().get(0).messageId()).isNotEqualTo(r.outputs().get(1).messageId());
    }

    @Test
    void shouldGiveDifferentIdsToOutputsOfTwoCallsNamingTheSameEarlierParent() {
        // before: both outputs derived their id from {ff} and position 0 alone, so they were equal and a sink's
        // deduplication by id dropped the second
        HarnessResult first = send("alice", 1, "earlier");
        HarnessResult second = send("alice", 1, "earlier");
        assertThat(first.outputs("totals").get(0).parentIds()).containsExactly(MessageId.fromHex("ff"));
        assertThat(first.outputs("totals").get(0).messageId())
                .isNotEqualTo(second.outputs("totals").get(0).messageId());
    }

    // ------------------------------------------------------------------ all or nothing, the runtime's checks

    /** As in the runtime, where the input would go to the dead-letter topic: a state row no producer sends. */
    @Test
    void shouldFailACallThatWritesAStateRowLargerThanTheProducerSends() {
        send("alice", 5, null);
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        HarnessResult failed = send("alice", 1, "big-blob 1100000");
        assertThat(failed.failed()).isTrue();
        assertThat(failed.failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessageStartingWith("state 'blob' of computation 'count' (a row of its changelog topic) would be a "
                        + "record of ")
                .hasMessageContaining("more than the producer's max.request.size of 1048576 bytes"));
        assertThat(count.state("total", alice)).hasValueSatisfying(s -> assertThat(s.get("sum")).isEqualTo(5L));
        assertThat(send("alice", 1, "big-blob 1000").failed()).as("a row that fits").isFalse();
    }

    /** A timer row holds the group-by key twice: a key whose state row fits can still make a timer row too large. */
    @Test
    void shouldFailACallThatAddsATimerRowLargerThanTheProducerSends() {
        String user = "u".repeat(600_000);
        HarnessResult failed = send(user, 1, "timer t 10 10");
        assertThat(failed.failed()).isTrue();
        assertThat(failed.failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessageStartingWith("a timer of timer stream 't' of computation 'count' (a row of its timers "
                        + "changelog topic) would be a record of ")
                .hasMessageContaining("more than the producer's max.request.size of 1048576 bytes"));
        GenericRecord key = count.keyOf("events", Map.of("user", user));
        assertThat(count.state("total", key)).as("nothing of the call applied").isEmpty();
        assertThat(count.pendingTimers()).as("no timer kept").isEmpty();
        assertThat(send(user, 1, null).failed()).as("the same key's state row fits").isFalse();
    }

    @Test
    void shouldApplyNothingWhenTheFunctionThrows() {
        send("alice", 5, null);
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        HarnessResult failed = send("alice", 100, "fail");
        assertThat(failed.failed()).isTrue();
        assertThat(failed.failure()).hasValueSatisfying(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                .hasMessage("boom for alice"));
        assertThat(failed.isEmpty()).isFalse();
        assertThatThrownBy(failed::outputs).isInstanceOf(AssertionError.class)
                .hasMessageContaining("computation 'count': message")
                .hasMessageContaining("of stream 'events' for key")
                .hasMessageContaining("failed: java.lang.IllegalStateException: boom for alice")
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThatThrownBy(failed::assertSucceeded).isInstanceOf(AssertionError.class);
        assertThat(count.state("total", alice)).hasValueSatisfying(s -> assertThat(s.get("sum")).isEqualTo(5L));
        assertThat(count.pendingTimers()).isEmpty();
        assertThat(count.failures()).containsExactly(failed);
        assertThat(send("alice", 1, null).payloads("totals")).extracting(p -> p.get("total")).containsExactly(6L);
    }

    @Test
    void shouldThrowAnOutageAsTheRuntimeRetriesItInsteadOfDeadLettering() {
        // parity audit: the harness made a dead letter of what the runtime retries (a timeout of a called service)
        send("alice", 5, null);
        assertThatThrownBy(() -> send("alice", 100, "outage")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("computation 'count': message")
                .hasMessageContaining("failed with an outage (java.io.UncheckedIOException: "
                        + "java.net.SocketTimeoutException: the service is down)")
                .hasMessageContaining("the runtime retries the call, it sends no dead letter");
        assertThat(count.failures()).as("no dead letter").isEmpty();
        assertThat(count.pendingTimers()).as("none of the call's effects").isEmpty();
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        assertThat(count.state("total", alice)).hasValueSatisfying(s -> assertThat(s.get("sum")).isEqualTo(5L));
    }

    @Test
    void shouldEnforceTheRuntimesRulesWithItsMessages() {
        assertThat(send("a", 1, "bad-stream").failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessage("stream 'events' is not an output of computation 'count'; its outputs are [totals, alerts]"));
        assertThat(send("a", 1, "bad-state").failure()).hasValueSatisfying(e -> assertThat(e).hasMessage(
                "computation 'count' declares no state 'nope'; declared states are [total, blob] (add it under "
                        + "'states' in the spec)"));
        assertThat(send("a", 1, "bad-type").failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessageContaining("output of stream 'totals' is not a valid record of schema harness.Total"));
        assertThat(send("a", 1, "foreign").failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessageContaining("addMessage takes messages built with this call's RuntimeContext.createMessageBuilder"));
        assertThat(send("a", 1, "timer nope 1 1").failure()).hasValueSatisfying(e -> assertThat(e)
                .hasMessage("computation 'count' has no timer stream 'nope'; its timer streams are [t, nodedup]"));
        assertThat(count.failures()).hasSize(5);
        assertThat(count.state("total", count.keyOf("events", Map.of("user", "a")))).as("no call applied").isEmpty();

        try (ComputationHarness plain = ComputationHarness.create(plainSpec(), "plain")) {
            assertThat(plain.message("events", event("a", 1, null), 0).failure()).hasValueSatisfying(e -> assertThat(e)
                    .hasMessage("computation 'plain' added a timer but declares no timer stream: add one under "
                            + "'timers' in the spec (a Transform computation)"));
            assertThatThrownBy(() -> plain.advanceWatermark(SEC)).hasMessageContaining("declares no timer stream");
            assertThatThrownBy(() -> plain.timer("t", plain.keyOf("events", Map.of("user", "a")), 1, 1))
                    .hasMessageContaining("has no timer stream 't': it declares none");
        }
    }

    // ------------------------------------------------------------------ timers

    @Test
    void shouldReportAddedTimersAndDeduplicateEqualTriggers() {
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        HarnessResult r = send("alice", 1, "timer t 10 8");
        assertThat(r.timers()).containsExactly(HarnessTimer.of("t", alice, 10 * SEC, 8 * SEC));
        assertThat(r.timers().get(0).getSystemTimestamp()).isEqualTo(count.currentTimeNanos());
        send("alice", 1, "timer t 10 9"); // a larger event timestamp: the pending timer stays
        send("alice", 1, "timer t 10 3"); // a smaller one replaces it
        send("alice", 1, "default-timer 10"); // the default (first) stream, event = trigger
        send("bob", 1, "timer t 10 8"); // another key
        send("alice", 1, "timer nodedup 10 8");
        send("alice", 1, "timer nodedup 10 8"); // without dedup both stay
        assertThat(count.pendingTimers()).extracting(HarnessTimer::getStreamId, t -> t.getKey().get("user"),
                HarnessTimer::getTriggerTimestamp, HarnessTimer::getEventTimestamp)
                .containsExactly(tuple("t", "alice", 10 * SEC, 3 * SEC), tuple("t", "bob", 10 * SEC, 8 * SEC),
                        tuple("nodedup", "alice", 10 * SEC, 8 * SEC), tuple("nodedup", "alice", 10 * SEC, 8 * SEC));
        assertThat(count.pendingTimers(alice)).hasSize(3);
    }

    @Test
    void shouldFireWhenTheWatermarkExceedsTheTriggerInTriggerOrder() {
        send("alice", 1, "timer t 20 20");
        send("alice", 1, "timer t 10 10");
        send("bob", 1, "timer nodedup 15 15");
        assertThat(count.advanceWatermark(10 * SEC)).as("a watermark equal to the trigger does not fire it").isEmpty();
        assertThat(count.watermark("t")).isEqualTo(10 * SEC);

        List<HarnessResult> fired = count.advanceWatermark(20 * SEC);
        assertThat(fired).extracting(HarnessResult::kind).containsOnly(HarnessResult.InputKind.TIMER);
        assertThat(fired).flatMap(f -> f.outputs("alerts")).extracting(o -> o.get("user"), o -> o.get("what"))
                .containsExactly(tuple("alice", "timer t 10 10"), tuple("bob", "timer nodedup 15 15"));
        assertThat(fired.get(0).outputs().get(0).eventTimestamp()).as("outputs inherit the timer's event timestamp")
                .isEqualTo(10 * SEC);
        assertThat(fired.get(0).outputs().get(0).parentIds()).containsExactly(fired.get(0).inputId());
        assertThat(count.pendingTimers()).extracting(HarnessTimer::getTriggerTimestamp).containsExactly(20 * SEC);

        assertThat(count.advanceWatermark(5 * SEC)).as("watermarks never go back").isEmpty();
        assertThat(count.watermark("t")).isEqualTo(20 * SEC);
        assertThat(count.advanceWatermark("nodedup", 100 * SEC)).as("only the named stream moves").isEmpty();
        assertThat(count.advanceWatermark("t", 21 * SEC)).hasSize(1);
        assertThat(count.pendingTimers()).isEmpty();
    }

    @Test
    void shouldFireTimersThatOnTimerAddsBelowTheWatermark() {
        send("alice", 1, "timer t 5 5");
        List<HarnessResult> fired = count.advanceWatermark(10 * SEC);
        assertThat(fired.get(0).timers()).extracting(HarnessTimer::getTriggerTimestamp).containsExactly(6 * SEC);
        assertThat(fired).flatMap(f -> f.outputs("alerts")).extracting(o -> o.get("what"))
                .containsExactly("timer t 5 5", "timer t 6 1");
    }

    @Test
    void shouldDeleteAFailedTimerAndKeepTheOthers() {
        send("fail", 1, "timer t 5 5");
        send("alice", 1, "timer t 6 6");
        List<HarnessResult> fired = count.advanceWatermark(10 * SEC);
        assertThat(fired).extracting(HarnessResult::failed).containsExactly(true, false);
        assertThat(fired.get(0).failure()).hasValueSatisfying(e -> assertThat(e).hasMessage("timer fails"));
        assertThat(fired.get(0).toString()).contains("timer").contains("of stream 't' (trigger 5000000000)");
        assertThat(count.pendingTimers()).as("the failed timer is deleted, as by the dead-letter handler").isEmpty();
        assertThat(count.failures()).containsExactly(fired.get(0));
    }

    @Test
    void shouldCallOnTimerDirectlyAndDeleteTheMatchingPendingTimer() {
        send("alice", 1, "timer t 10 10");
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        HarnessResult r = count.timer("t", alice, 10 * SEC, 10 * SEC);
        assertThat(r.payloads("alerts")).extracting(p -> p.get("what").toString()).containsExactly("timer t 10 10");
        assertThat(count.pendingTimers()).isEmpty();
        assertThat(count.timer("t", alice, 99 * SEC, 1 * SEC).outputs()).hasSize(1);
        assertThatThrownBy(() -> count.timer("tt", alice, 1, 1))
                .hasMessageContaining("computation 'count' has no timer stream 'tt'; its timer streams are [t, nodedup]");
    }

    // ------------------------------------------------------------------ visits

    @Test
    void shouldVisitWithTheRuntimesOutputRules() {
        send("alice", 1, null);
        GenericRecord alice = count.keyOf("events", Map.of("user", "alice"));
        HarnessResult ok = count.visit("sweep", alice, 0, 33L);
        assertThat(ok.kind()).isEqualTo(HarnessResult.InputKind.VISIT);
        assertThat(ok.payloads("alerts")).extracting(p -> p.get("what").toString()).containsExactly("visit sweep 33");
        assertThat(ok.outputs().get(0).eventTimestamp()).isEqualTo(33L);

        assertThat(count.visit("sweep", alice, 1, 0).failure()).hasValueSatisfying(e -> assertThat(e).hasMessage(
                "computation 'count' emitted to 'totals' from onVisit of key-visitor stream 'sweep', but "
                        + "streams_dependency.totals does not list 'sweep'; add it: \"streams_dependency\": "
                        + "{\"totals\": [..., \"sweep\"]}"));

        send("bob", 1, null);
        List<HarnessResult> pass = count.visitAll("sweep", 2, 0);
        assertThat(pass).extracting(r -> r.key().get("user")).containsExactly("alice", "bob");
        assertThat(count.keys()).isEmpty();
        assertThatThrownBy(() -> count.visit("swepe", alice, 0, 0)).hasMessageContaining(
                "computation 'count' has no key-visitor stream 'swepe'; its key-visitor streams are [sweep]");

        try (ComputationHarness swift = ComputationHarness.create(swiftSpec(), "swift")) {
            swift.message("events", event("a", 1, null), 0).assertSucceeded();
            assertThat(swift.visitAll("sweep", 0, 0)).singleElement().satisfies(r -> assertThat(r.failure())
                    .hasValueSatisfying(e -> assertThat(e).hasMessageContaining(
                            "SwiftMap computation 'swift' emitted to 'alerts' from onVisit, which Flow forbids")));
        }
    }

    // ------------------------------------------------------------------ batch functions

    @Test
    void shouldCallABatchFunctionWithBatchesOfOne() {
        Batch.BATCH_SIZES.clear();
        try (ComputationHarness batch = ComputationHarness.create(batchSpec(), "batch")) {
            HarnessResult r = batch.message("events", event("alice", 4, null), 0);
            GenericRecord shadow = batch.key(Map.of("hash", 0L, "user", "shadow"));
            assertThat(r.stateChanges()).extracting(HarnessResult.StateChange::state, c -> c.key().get("user"))
                    .containsExactly(tuple("total", "alice"), tuple("total", "shadow"));
            assertThat(batch.state("total", shadow)).hasValueSatisfying(s -> assertThat(s.get("sum")).isEqualTo(4L));
            assertThat(r.timers()).extracting(HarnessTimer::getStreamId).containsExactly("t");
            batch.message("events", event("alice", 6, null), 0);
            assertThat(batch.pendingTimers()).as("deduplicated").hasSize(1);
            List<HarnessResult> fired = batch.advanceWatermark(8 * SEC);
            assertThat(fired).flatMap(f -> f.payloads("totals")).extracting(p -> p.get("total")).containsExactly(10L);
            assertThat(batch.visitAll("sweep", 0, 0)).hasSize(2);
            assertThat(batch.keys()).isEmpty();
        }
        assertThat(Batch.BATCH_SIZES).containsExactly(1, 1);
    }
}
