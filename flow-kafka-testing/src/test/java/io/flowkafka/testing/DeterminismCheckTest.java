package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.DeterminismCheck.Difference;
import io.flowkafka.testing.DeterminismCheck.Run;
import io.flowkafka.testing.DeterminismCheck.What;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.junit.jupiter.api.Test;

/**
 * {@link DeterminismCheck}: catches a SwiftMap that emits in the order of a hash set of random
 * strings, ones that differ only after a restart (a per-instance counter, a remembered parent, a
 * first-call extra output, a warm-up failure), one that reads the clock; passes a deterministic
 * one that keeps its count in state.
 */
class DeterminismCheckTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("det").fields()
            .requiredString("user").optionalString("text").endRecord();
    static final Schema WORD = SchemaBuilder.record("Word").namespace("det").fields()
            .requiredString("user").requiredString("word").requiredLong("n").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("det").fields()
            .requiredLong("count").endRecord();
    private static final long SEC = 1_000_000_000L;
    private static final long START = ComputationHarness.DEFAULT_CLOCK_START.getEpochSecond() * SEC;

    private static Message word(RuntimeContext context, Message in, String word, long n) {
        return context.createMessageBuilder("words").set("user", in.getPayload().get("user").toString())
                .set("word", word).set("n", n).build();
    }

    /** Deterministic: the words of {@code text} in sorted order, numbered by a per-key count kept in state. */
    public static final class SortedWords implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> state = context.getState("count");
            long count = (Long) state.getOrDefault(new GenericRecordBuilder(COUNT).set("count", 0L).build())
                    .get("count") + 1;
            state.set(new GenericRecordBuilder(COUNT).set("count", count).build());
            for (String w : new TreeSet<>(List.of(message.getPayload().get("text").toString().split(" ")))) {
                output.addMessage(word(context, message, w, count));
            }
        }
    }

    /** Non-deterministic: three random strings per call, emitted in the order of a HashSet. */
    public static final class RandomWords implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            Random random = new Random();
            Set<String> words = new HashSet<>();
            while (words.size() < 3) {
                StringBuilder w = new StringBuilder();
                for (int i = 0; i < 8; i++) {
                    w.append((char) ('a' + random.nextInt(26)));
                }
                words.add(w.toString());
            }
            long n = 0;
            for (String w : words) {
                output.addMessage(word(context, message, w, n++));
            }
        }
    }

    /** Differs only after a restart: numbers its outputs with a per-instance count of messages seen. */
    public static final class CountsInAField implements RowFunction {
        private long seen;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(word(context, message, message.getPayload().get("text").toString(), ++seen));
        }
    }

    /** Differs only after a restart: the previous message of the instance becomes a parent. */
    public static final class RemembersPrevious implements RowFunction {
        private MessageId previous;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            List<MessageId> parents = new ArrayList<>();
            if (previous != null) {
                parents.add(previous);
            }
            parents.add(message.getMessageId());
            previous = message.getMessageId();
            output.withParentIds(parents).addMessage(word(context, message, "w", 0));
        }
    }

    /** Differs only after a restart: the first call of an instance also emits a greeting. */
    public static final class GreetsOnStart implements RowFunction {
        private boolean greeted;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(word(context, message, "w", 0));
            if (!greeted) {
                greeted = true;
                output.addMessage(word(context, message, "hello", 0));
            }
        }
    }

    /** Differs only after a restart: the first call of an instance fails ("cache not loaded"). */
    public static final class FailsWhileCold implements RowFunction {
        private boolean warm;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (!warm) {
                warm = true;
                throw new IllegalStateException("cache not loaded");
            }
            output.addMessage(word(context, message, "w", 0));
        }
    }

    /** Non-deterministic: the processing clock in the output. */
    public static final class ReadsTheClock implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(word(context, message, "now", context.currentTimeNanos()));
        }
    }

    static PipelineSpec spec(Supplier<? extends ProcessFunction> function, ComputationKind kind) {
        return PipelineSpec.builder("det")
                .stream("raw", EVENT).stream("events", EVENT).stream("words", WORD)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")).outputStreamIds("events"))
                .computation("words", c -> c.kind(kind).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(function).outputStreamIds("words"))
                .build();
    }

    static DeterminismCheck check(Supplier<? extends ProcessFunction> function) {
        return inputs(DeterminismCheck.of(spec(function, ComputationKind.SWIFT_MAP), "words"));
    }

    /**
     * The same inputs on a Transform computation ({@code ofAnyKind}): a SwiftMap output has exactly
     * one parent, its input, unless batching is on (reference 002: "With the flag disabled (default),
     * each output message has exactly one parent"), so parents that differ need another kind.
     */
    static DeterminismCheck checkTransform(Supplier<? extends ProcessFunction> function) {
        return inputs(DeterminismCheck.ofAnyKind(spec(function, ComputationKind.TRANSFORM), "words"));
    }

    private static DeterminismCheck inputs(DeterminismCheck check) {
        return check
                .message("events", Map.of("user", "alice", "text", "b a c"), 1 * SEC)
                .message("events", Map.of("user", "bob", "text", "x y"), 2 * SEC)
                .message("events", Map.of("user", "alice", "text", "d"), 3 * SEC)
                .message("events", Map.of("user", "alice", "text", "e f"), 4 * SEC);
    }

    @Test
    void shouldPassADeterministicFunctionThatKeepsItsCountInState() {
        DeterminismCheck.Report report = check(SortedWords::new).run();
        assertThat(report.isDeterministic()).isTrue();
        assertThat(report.firstDifference()).isEmpty();
        assertThat(report.inputCount()).isEqualTo(4);
        assertThat(report.restartAfter()).isEqualTo(2);
        assertThat(report.assertDeterministic()).isSameAs(report);
        assertThat(report).hasToString("computation 'words' was deterministic over 4 inputs (3 runs, the third restarted after 2 inputs)");
    }

    @Test
    void shouldCatchHashOrderOfRandomStringsInTheSecondRun() {
        DeterminismCheck.Report report = check(RandomWords::new).run();
        assertThat(report.isDeterministic()).isFalse();
        Difference d = report.firstDifference().orElseThrow();
        assertThat(d.run()).isEqualTo(Run.SECOND);
        assertThat(d.input().index()).isZero();
        assertThat(d.input().streamId()).isEqualTo("events");
        assertThat(d.input().payload().get("text").toString()).isEqualTo("b a c");
        assertThat(d.key().get("user")).isEqualTo("alice");
        assertThat(d.outputPosition()).isZero();
        assertThat(d.what()).isEqualTo(What.PAYLOAD_FIELD);
        assertThat(d.field()).isEqualTo("word");
        assertThat(d.expected()).isInstanceOf(String.class).isNotEqualTo(d.actual());
        assertThatThrownBy(report::assertDeterministic).isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("computation 'words' is not deterministic: the second run (a new function "
                        + "instance over the same inputs) differs from the first run at input #0 (stream 'events', key ")
                .hasMessageContaining("alice")
                .hasMessageContaining("output #0 field 'word' is \"" + d.actual() + "\" instead of \"" + d.expected() + "\"");
    }

    @Test
    void shouldCatchAPerInstanceCounterOnlyInTheRunWithARestart() {
        DeterminismCheck.Report report = check(CountsInAField::new).run();
        Difference d = report.firstDifference().orElseThrow();
        assertThat(d.run()).as("a fresh second run counts the same").isEqualTo(Run.AFTER_RESTART);
        assertThat(d.input().index()).as("the first input after the restart").isEqualTo(2);
        assertThat(d.input().payload().get("text").toString()).isEqualTo("d");
        assertThat(d.key().get("user")).isEqualTo("alice");
        assertThat(d.outputPosition()).isZero();
        assertThat(d.what()).isEqualTo(What.PAYLOAD_FIELD);
        assertThat(d.field()).isEqualTo("n");
        assertThat(d.expected()).isEqualTo(3L);
        assertThat(d.actual()).isEqualTo(1L);
        assertThatThrownBy(() -> check(CountsInAField::new).assertDeterministic()).isInstanceOf(AssertionError.class)
                .hasMessageContaining("the run with a restart (a new function instance, keeping the state) differs from "
                        + "the first run at input #2 (stream 'events'")
                .hasMessageContaining("output #0 field 'n' is 1 instead of 3 (restart after 2 inputs)");

        Difference late = check(CountsInAField::new).restartAfter(3).run().firstDifference().orElseThrow();
        assertThat(late.input().index()).isEqualTo(3);
        assertThat(late.expected()).isEqualTo(4L);
    }

    @Test
    void shouldCatchParentsExtraOutputsAndFailuresThatDifferAfterARestart() {
        Difference parents = checkTransform(RemembersPrevious::new).run().firstDifference().orElseThrow();
        assertThat(parents.run()).isEqualTo(Run.AFTER_RESTART);
        assertThat(parents.input().index()).isEqualTo(2);
        assertThat(parents.outputPosition()).isZero();
        assertThat(parents.what()).isEqualTo(What.PARENTS);
        @SuppressWarnings("unchecked")
        List<MessageId> expected = (List<MessageId>) parents.expected();
        @SuppressWarnings("unchecked")
        List<MessageId> actual = (List<MessageId>) parents.actual();
        assertThat(actual).as("the restarted instance remembers no previous message").hasSize(1);
        assertThat(expected).as("the previous input, then this one").hasSize(2).endsWith(actual.get(0));

        Difference extra = check(GreetsOnStart::new).run().firstDifference().orElseThrow();
        assertThat(extra.run()).isEqualTo(Run.AFTER_RESTART);
        assertThat(extra.input().index()).isEqualTo(2);
        assertThat(extra.outputPosition()).isEqualTo(1);
        assertThat(extra.what()).isEqualTo(What.EXTRA_OUTPUT);
        assertThat(extra.expected()).isNull();
        assertThat(extra.describe()).contains("output #1 is extra; the first run emitted no such output, this run "
                + "emitted an output to 'words' with payload").contains("hello");

        Difference failure = check(FailsWhileCold::new).run().firstDifference().orElseThrow();
        assertThat(failure.run()).isEqualTo(Run.AFTER_RESTART);
        assertThat(failure.input().index()).as("input #0 fails in every run alike").isEqualTo(2);
        assertThat(failure.what()).isEqualTo(What.FAILURE);
        assertThat(failure.outputPosition()).isEqualTo(-1);
        assertThat(failure.expected()).isEqualTo("succeeded");
        assertThat(failure.actual()).isEqualTo("threw java.lang.IllegalStateException: cache not loaded");
    }

    @Test
    void shouldCatchAFunctionThatReadsTheClockUnlessTheClockIsNotShifted() {
        Difference d = check(ReadsTheClock::new).run().firstDifference().orElseThrow();
        assertThat(d.run()).isEqualTo(Run.SECOND);
        assertThat(d.input().index()).isZero();
        assertThat(d.field()).isEqualTo("n");
        assertThat(d.expected()).isEqualTo(START);
        assertThat(d.actual()).isEqualTo(START + Duration.ofHours(1).toNanos());
        assertThat(check(ReadsTheClock::new).clockShift(Duration.ZERO).run().isDeterministic()).isTrue();
    }

    @Test
    void shouldReportAMissingOutputAndAcceptRecordPayloads() {
        // A second run sees a static flag the first run set: the first run emits, later runs do not.
        boolean[] firstRun = {true};
        Supplier<ProcessFunction> once = () -> {
            boolean emit = firstRun[0];
            firstRun[0] = false;
            return (RowFunction) (message, output, context) -> {
                if (emit) {
                    output.addMessage(word(context, message, "w", 0));
                }
            };
        };
        GenericRecord payload = new GenericRecordBuilder(EVENT).set("user", "carol").set("text", "z").build();
        DeterminismCheck.Report report = DeterminismCheck.of(spec(once, ComputationKind.SWIFT_MAP), "words")
                .message("events", payload, 5 * SEC).run();
        Difference d = report.firstDifference().orElseThrow();
        assertThat(d.run()).isEqualTo(Run.SECOND);
        assertThat(d.what()).isEqualTo(What.MISSING_OUTPUT);
        assertThat(d.outputPosition()).isZero();
        assertThat(d.actual()).isNull();
        assertThat(d.key().get("user")).isEqualTo("carol");
        assertThat(d.input().eventTimestamp()).isEqualTo(5 * SEC);
        assertThat(report.restartAfter()).as("one input: the restart comes first").isZero();
    }

    @Test
    void shouldRefuseOtherKindsUnlessAskedAndCheckItsInputs() {
        PipelineSpec transform = spec(SortedWords::new, ComputationKind.TRANSFORM);
        assertThatThrownBy(() -> DeterminismCheck.of(transform, "words")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("computation 'words' is a Transform computation, but Flow demands determinism "
                        + "only of SwiftMap computations")
                .hasMessageContaining("DeterminismCheck.ofAnyKind(spec, \"words\")");
        assertThat(DeterminismCheck.ofAnyKind(transform, "words")
                .message("events", Map.of("user", "a", "text", "q"), 0).run().isDeterministic()).isTrue();
        assertThatThrownBy(() -> DeterminismCheck.of(transform, "wrods"))
                .hasMessageContaining("pipeline 'det' has no computation 'wrods'; its computations are [read, words]");
        assertThatThrownBy(() -> check(SortedWords::new).restartAfter(5).run())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("exceeds the 4 inputs");
        assertThatThrownBy(() -> DeterminismCheck.of(spec(SortedWords::new, ComputationKind.SWIFT_MAP), "words").run())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("has no inputs");
        assertThatThrownBy(() -> check(SortedWords::new).message("words", Map.of("user", "a"), 0).run())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream 'words' is not an input of computation 'words'");
    }
}
