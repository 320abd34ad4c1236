package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * SwiftMap batching on {@link FlowTestDriver}, against the reference ("Batching in Swift
 * computations: allow_batching_with_relaxed_guarantees"):
 *
 * <pre>
 *   topic events-in (JSON {"user", "n"}) -> read (Source) -> stream events
 *     -> batch (SwiftMap, BatchFunction, group by user) -> stream sums {"user", "count", "total"}
 * </pre>
 */
class SwiftMapBatchingTest {
    private static final String PIPELINE = "batching";

    static final Schema EVENT = SchemaBuilder.record("Event").namespace("test.batching").fields()
            .requiredString("user").requiredLong("n").endRecord();
    static final Schema SUM = SchemaBuilder.record("Sum").namespace("test.batching").fields()
            .requiredString("user").requiredLong("count").requiredLong("total").endRecord();

    /**
     * Collapses a batch into one output per user, whose parents are that user's messages; with
     * parameter {@code reverse}, emits the users and lists each output's parents in reverse order.
     * Throws after emitting if any {@code n} is negative.
     */
    public static final class PerUserSums implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            Map<String, List<Message>> byUser = new LinkedHashMap<>();
            for (Message m : messages) {
                byUser.computeIfAbsent(m.getPayload().get("user").toString(), u -> new ArrayList<>()).add(m);
            }
            List<String> users = new ArrayList<>(byUser.keySet());
            boolean reverse = Boolean.TRUE.equals(context.getParameters().get("reverse"));
            if (reverse) {
                Collections.reverse(users);
            }
            boolean bad = false;
            for (String user : users) {
                List<MessageId> parents = new ArrayList<>();
                long total = 0;
                for (Message m : byUser.get(user)) {
                    parents.add(m.getMessageId());
                    long n = (Long) m.getPayload().get("n");
                    bad |= n < 0;
                    total += n;
                }
                if (reverse) {
                    Collections.reverse(parents);
                }
                output.withParentIds(parents).addMessage(context.createMessageBuilder("sums").set("user", user)
                        .set("count", (long) parents.size()).set("total", total).build());
            }
            if (bad) {
                throw new IllegalArgumentException("negative n in a batch of " + messages.size());
            }
        }
    }

    /** One output per batch with the default parents: the whole batch. */
    public static final class BatchTotal implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            long total = 0;
            for (Message m : messages) {
                total += (Long) m.getPayload().get("n");
            }
            output.addMessage(context.createMessageBuilder("sums").set("user", "*")
                    .set("count", (long) messages.size()).set("total", total).build());
        }
    }

    /** Names parents it should not: another message's id ({@code n} = 1), an unknown id ({@code n} = 2). */
    public static final class WrongParents implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            for (Message m : messages) {
                List<MessageId> parents = (Long) m.getPayload().get("n") == 2
                        ? List.of(m.getMessageId(), MessageId.fromHex("00ff"))
                        : List.of(m.getMessageId(), messages.get(0).getMessageId());
                output.withParentIds(parents).addMessage(context.createMessageBuilder("sums").set("user", "x")
                        .set("count", 1L).set("total", 0L).build());
            }
        }
    }

    /** Reads the state of the "current key", which a batched call does not have. */
    public static final class KeyReader implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            context.getKey();
        }
    }

    static PipelineSpec spec(Supplier<BatchFunction> function, UnaryOperator<ComputationSpec.Builder> batching) {
        return PipelineSpec.builder(PIPELINE)
                .stream("raw", EVENT).stream("events", EVENT).stream("sums", SUM)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "events-in", "finite", true))
                        .outputStreamIds("events"))
                .computation("batch", c -> batching.apply(c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(function).outputStreamIds("sums")))
                .build();
    }

    static UnaryOperator<ComputationSpec.Builder> batches(int size) {
        return c -> c.allowBatchingWithRelaxedGuarantees(true).maxBatchSize(size).maxBatchDelay(Duration.ofHours(1));
    }

    private static MessageId pipe(FlowTestDriver driver, String user, long n, long eventTimestamp) {
        return driver.pipe("events", Map.of("user", user, "n", n), eventTimestamp);
    }

    private static Map<String, Message> byUser(List<Message> sums) {
        Map<String, Message> m = new LinkedHashMap<>();
        sums.forEach(s -> m.put(s.getPayload().get("user").toString(), s));
        return m;
    }

    private static double counter(FlowTestDriver driver, String cut) {
        return driver.meterRegistry().get("flow.batching.batches").tag("computation", "batch").tag("cut", cut)
                .counter().count();
    }

    @Test
    void shouldEmitOneOutputWithSeveralParents() {
        // "a single output message can combine multiple input messages (batching)"
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(4)))) {
            MessageId a1 = pipe(driver, "alice", 1, 100);
            MessageId b1 = pipe(driver, "bob", 10, 300);
            MessageId a2 = pipe(driver, "alice", 2, 200);
            assertThat(driver.readStream("sums")).as("a batch of 4 is not full yet").isEmpty();
            MessageId a3 = pipe(driver, "alice", 4, 150);

            List<Message> sums = driver.readStream("sums");
            assertThat(sums).extracting(m -> m.getPayload().get("user").toString()).containsExactly("alice", "bob");
            Message alice = byUser(sums).get("alice");
            assertThat(alice.getPayload().get("count")).isEqualTo(3L);
            assertThat(alice.getPayload().get("total")).isEqualTo(7L);
            assertThat(alice.getParentIds()).as("the parent set, sorted").containsExactly(a1, a2, a3);
            assertThat(alice.getEventTimestamp()).as("the largest of its parents'").isEqualTo(200L);
            assertThat(alice.getMessageId().size()).as("compact: a derived id").isEqualTo(24);
            assertThat(alice.getMessageId()).as("sorts beside its largest parent")
                    .isGreaterThan(MessageId.of(java.util.Arrays.copyOf(a3.toBytes(), 24)));
            Message bob = byUser(sums).get("bob");
            assertThat(bob.getParentIds()).containsExactly(b1);
            assertThat(bob.getEventTimestamp()).isEqualTo(300L);
            assertThat(driver.readDeadLetters()).isEmpty();
            assertThat(counter(driver, "size")).isEqualTo(1.0);
            assertThat(driver.meterRegistry().get("flow.batching.batch_size").summary().totalAmount()).isEqualTo(4.0);
        }
    }

    /**
     * An input whose buffered row (the record and where it came from, a row of the buffer's changelog) is larger
     * than the producer sends goes to the dead-letter topic: on a broker the changelog send would otherwise fail the
     * task's commit on every replay (helper audit). The batch goes on without it.
     */
    @Test
    void shouldDeadLetterAnInputTooLargeToBufferAndGoOn() {
        java.util.Properties props = new java.util.Properties();
        props.put("producer.max.request.size", "2000");
        try (FlowTestDriver driver = FlowTestDriver.create(spec(BatchTotal::new, batches(2)), props)) {
            pipe(driver, "a", 1, 10);
            pipe(driver, "x".repeat(3000), 100, 20);
            pipe(driver, "b", 2, 30);

            assertThat(driver.readStream("sums")).singleElement().satisfies(m -> {
                assertThat(m.getPayload().get("count")).isEqualTo(2L);
                assertThat(m.getPayload().get("total")).isEqualTo(3L);
            });
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("batch");
                assertThat(d.stage()).isEqualTo("buffer the record for its batch");
                assertThat(d.errorMessage()).contains("this input buffered for its batch (a row of the changelog of "
                        + "store batch.batch)").contains("more than the producer's max.request.size of 2000 bytes");
            });
        }
    }

    @Test
    void shouldGiveTheWholeBatchAsDefaultParents() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(BatchTotal::new, batches(3)))) {
            List<MessageId> ids = List.of(pipe(driver, "c", 3, 30), pipe(driver, "a", 1, 10), pipe(driver, "b", 2, 20));
            assertThat(driver.readStream("sums")).singleElement().satisfies(m -> {
                assertThat(m.getParentIds()).containsExactlyElementsOf(ids);
                assertThat(m.getPayload().get("total")).isEqualTo(6L);
                assertThat(m.getEventTimestamp()).isEqualTo(30L);
            });
        }
    }

    @Test
    void shouldGiveTheSameIdToTheSameParentSetInAnyOrder() {
        // "The combined message gets a MessageId derived deterministically from the set of its parents' MessageIds"
        Map<String, Message> forward;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(5)))) {
            input(driver);
            forward = byUser(driver.readStream("sums"));
        }
        Map<String, Message> reversed;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new,
                c -> batches(5).apply(c).parameter("reverse", true)))) {
            input(driver);
            List<Message> sums = driver.readStream("sums");
            assertThat(sums).extracting(m -> m.getPayload().get("user").toString())
                    .as("outputs in the other order, parents listed in the other order").containsExactly("carol", "bob", "alice");
            reversed = byUser(sums);
        }
        assertThat(reversed.keySet()).containsExactlyInAnyOrderElementsOf(forward.keySet());
        for (String user : forward.keySet()) {
            assertThat(reversed.get(user).getMessageId()).as(user).isEqualTo(forward.get(user).getMessageId());
            assertThat(reversed.get(user).getParentIds()).isEqualTo(forward.get(user).getParentIds());
        }
        assertThat(forward.values()).extracting(Message::getMessageId).doesNotHaveDuplicates();
    }

    private static void input(FlowTestDriver driver) {
        pipe(driver, "alice", 1, 1);
        pipe(driver, "bob", 2, 2);
        pipe(driver, "alice", 3, 3);
        pipe(driver, "carol", 4, 4);
        pipe(driver, "bob", 5, 5);
    }

    @Test
    void shouldReproduceBatchesAndIdsOnReplay() {
        // "A replay that reproduces a batch with the same set of parents yields the same MessageId": two drivers
        // reading the same input make the same size cuts, and the same delay cut at the same clock
        List<Message> first = replayRun();
        List<Message> second = replayRun();
        assertThat(first).hasSize(4);
        assertThat(second).extracting(Message::getMessageId).isEqualTo(first.stream().map(Message::getMessageId).toList());
        assertThat(second).extracting(Message::getParentIds).isEqualTo(first.stream().map(Message::getParentIds).toList());
        assertThat(second).extracting(Message::getPayload).isEqualTo(first.stream().map(Message::getPayload).toList());
    }

    private static List<Message> replayRun() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new,
                c -> c.allowBatchingWithRelaxedGuarantees(true).maxBatchSize(3).maxBatchDelay(Duration.ofSeconds(1))))) {
            for (int i = 0; i < 5; i++) {
                pipe(driver, i % 2 == 0 ? "alice" : "bob", i, i);
            }
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(counter(driver, "size")).isEqualTo(1.0);
            assertThat(counter(driver, "delay")).isEqualTo(1.0);
            return driver.readStream("sums");
        }
    }

    @Test
    void shouldGiveADifferentIdWhenTheBatchDiffers() {
        // "if a parent ends up in a batch with a different composition, that batch's MessageId is different —
        // downstream computations must be ready to see each parent's content more than once (at-least-once)"
        List<Message> whole;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(4)))) {
            for (int i = 1; i <= 4; i++) {
                pipe(driver, "alice", i, i);
            }
            whole = driver.readStream("sums");
        }
        List<Message> halves;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(2)))) {
            for (int i = 1; i <= 4; i++) {
                pipe(driver, "alice", i, i);
            }
            halves = driver.readStream("sums");
        }
        assertThat(whole).singleElement().satisfies(m -> assertThat(m.getParentIds()).hasSize(4));
        assertThat(halves).hasSize(2).allSatisfy(m -> assertThat(m.getParentIds()).hasSize(2));
        List<MessageId> ids = new ArrayList<>(List.of(whole.get(0).getMessageId()));
        halves.forEach(m -> ids.add(m.getMessageId()));
        assertThat(ids).doesNotHaveDuplicates();
        // each output sorts at its largest parent
        assertThat(halves.get(0).getMessageId()).isLessThan(halves.get(1).getMessageId());
        assertThat(whole.get(0).getMessageId()).isGreaterThan(halves.get(0).getMessageId());
    }

    @Test
    void shouldKeepTheIdOfAnOutputWithOneParentWhetherBatchedOrNot() {
        List<Message> batched;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(3)))) {
            pipe(driver, "alice", 1, 1);
            pipe(driver, "bob", 2, 2);
            pipe(driver, "carol", 3, 3);
            batched = driver.readStream("sums");
        }
        List<Message> unbatched;
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, c -> c))) {
            pipe(driver, "alice", 1, 1);
            pipe(driver, "bob", 2, 2);
            pipe(driver, "carol", 3, 3);
            unbatched = driver.readStream("sums");
        }
        assertThat(batched).hasSize(3);
        assertThat(batched).extracting(Message::getMessageId)
                .isEqualTo(unbatched.stream().map(Message::getMessageId).toList());
    }

    @Test
    void shouldKeepOneParentPerOutputWithoutTheFlag() {
        // "With the flag disabled (default), each output message has exactly one parent"
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, c -> c))) {
            List<MessageId> in = List.of(pipe(driver, "alice", 1, 1), pipe(driver, "alice", 2, 2), pipe(driver, "bob", 3, 3));
            List<Message> sums = driver.readStream("sums");
            assertThat(sums).as("batches of one, output at once").hasSize(3);
            assertThat(sums).extracting(Message::getParentIds).containsExactly(List.of(in.get(0)), List.of(in.get(1)),
                    List.of(in.get(2)));
            assertThat(driver.meterRegistry().find("flow.batching.batches").counters()).isEmpty();
        }
        try (FlowTestDriver driver = FlowTestDriver.create(spec(WrongParents::new, c -> c))) {
            pipe(driver, "x", 2, 1);
            assertThat(driver.readStream("sums")).isEmpty();
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("batch");
                assertThat(d.errorClass()).isEqualTo(IllegalArgumentException.class.getName());
                assertThat(d.errorMessage()).contains("SwiftMap computation 'batch' gave an output the parents [")
                        .contains("but each output of a SwiftMap has exactly one parent, the message being processed")
                        .contains("unless parameters.allow_batching_with_relaxed_guarantees is true")
                        .contains("set allow_batching_with_relaxed_guarantees: true in the parameters of 'batch'");
            });
        }
    }

    @Test
    void shouldRejectParentsOutsideTheBatchAndTheCurrentKey() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(WrongParents::new, batches(2)))) {
            pipe(driver, "x", 1, 1);
            pipe(driver, "x", 2, 2);
            List<Message> sums = driver.readStream("sums");
            // the batch failed as a whole; alone, the first message names only itself and is written
            assertThat(sums).singleElement().satisfies(m -> assertThat(m.getParentIds()).hasSize(1));
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> assertThat(d.errorMessage())
                    .contains("parent 00ff is not a message of the batch being processed by SwiftMap computation 'batch'"));
        }
        try (FlowTestDriver driver = FlowTestDriver.create(spec(KeyReader::new, batches(1)))) {
            pipe(driver, "x", 1, 1);
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> assertThat(d.errorMessage())
                    .contains("a batched call of SwiftMap computation 'batch' spans several messages and keys, so it "
                            + "has no current key: use getState(name, message.getKey())"));
        }
    }

    @Test
    void shouldSendOnlyTheFailingMessagesOfAFailedBatchToDeadLetters() {
        // a failed call's effects are not applied; its inputs are run alone, as without batching
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(3)))) {
            MessageId a1 = pipe(driver, "alice", 1, 1);
            pipe(driver, "bob", -1, 2);
            MessageId a2 = pipe(driver, "alice", 2, 3);

            List<Message> sums = driver.readStream("sums");
            assertThat(sums).as("nothing of the failed batch call, then each good message alone")
                    .extracting(Message::getParentIds).containsExactly(List.of(a1), List.of(a2));
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("batch");
                assertThat(d.errorMessage()).isEqualTo("negative n in a batch of 1");
                assertThat(d.stage()).startsWith("process message ");
                assertThat(d.sourceTopic()).isEqualTo(PIPELINE + ".events");
                assertThat(d.sourceOffset()).isEqualTo(1L);
                assertThat(d.value()).as("the original Avro payload").isNotEmpty();
            });
        }
    }

    @Test
    void shouldHoldTheOutputWatermarkAtTheOldestBufferedMessage() {
        // outputs inherit their parents' event time, so they must not fall behind a watermark sent before them
        PipelineSpec spec = PipelineSpec.builder(PIPELINE)
                .stream("raw", EVENT).stream("events", EVENT).stream("sums", SUM)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "events-in", "event_timestamp_column", "n"))
                        .watermarkStrategy(io.flowkafka.spec.WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO))
                        .outputStreamIds("events"))
                .computation("batch", c -> batches(100).apply(c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").processingFunction(PerUserSums::new)
                        .outputStreamIds("sums")).maxBatchDelay(Duration.ofSeconds(10)))
                .build();
        long ms = 1_000_000L;
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("events-in", "alice", "{\"user\": \"alice\", \"n\": 1000}");
            driver.advanceWallClockTime(Duration.ofMillis(300));
            driver.pipeSource("events-in", "bob", "{\"user\": \"bob\", \"n\": 5000}");
            driver.advanceWallClockTime(Duration.ofMillis(300));
            SumsTopic held = readSums(driver);
            assertThat(held.messages()).isZero();
            assertThat(held.lastEventWatermark()).as("the input watermark is 5000 ms, alice's message 1000 ms")
                    .isEqualTo(1000 * ms);

            driver.advanceWallClockTime(Duration.ofSeconds(10));
            SumsTopic cut = readSums(driver);
            assertThat(cut.messages()).isEqualTo(2);
            // readSums checks the order: the cut's outputs first, then the released watermark (on the driver it goes
            // out right after them, not at the next watermark step)
            assertThat(cut.lastEventWatermark()).as("released after the cut's outputs").isEqualTo(5000 * ms);
        }
    }

    /** What the batch task wrote to its output topic since the last read: messages, and its last event watermark. */
    record SumsTopic(int messages, long lastEventWatermark) {
    }

    private static SumsTopic readSums(FlowTestDriver driver) {
        io.flowkafka.avro.FlowAvroClasses.trust();
        org.apache.avro.specific.SpecificDatumReader<io.flowkafka.avro.ControlRecord> reader =
                new org.apache.avro.specific.SpecificDatumReader<>(io.flowkafka.avro.ControlRecord.class);
        long last = Long.MIN_VALUE;
        int messages = 0;
        boolean released = false;
        for (var r : driver.readTopic(PIPELINE + ".sums")) {
            if (r.headers().lastHeader("flow.control") == null) {
                assertThat(released).as("no message after the watermark passed it").isFalse();
                messages++;
                continue;
            }
            try {
                long wm = reader.read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(r.value(), null))
                        .getEventWatermark();
                released = wm >= 5000 * 1_000_000L;
                last = wm;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return new SumsTopic(messages, last);
    }

    @Test
    void shouldCutABatchAfterTheDelay() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new,
                c -> c.allowBatchingWithRelaxedGuarantees(true).maxBatchDelay(Duration.ofMillis(500))))) {
            pipe(driver, "alice", 1, 1);
            driver.advanceWallClockTime(Duration.ofMillis(300));
            pipe(driver, "alice", 2, 2);
            assertThat(driver.readStream("sums")).isEmpty();
            driver.advanceWallClockTime(Duration.ofMillis(200));
            assertThat(driver.readStream("sums")).singleElement()
                    .satisfies(m -> assertThat(m.getPayload().get("count")).isEqualTo(2L));
            assertThat(counter(driver, "delay")).isEqualTo(1.0);
            assertThat(counter(driver, "size")).isZero();
        }
    }

    @Test
    void shouldCutTheLastBatchWhenTheInputsComplete() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(PerUserSums::new, batches(100)))) {
            driver.pipeSource("events-in", "alice", "{\"user\": \"alice\", \"n\": 1}");
            driver.pipeSource("events-in", "bob", "{\"user\": \"bob\", \"n\": 2}");
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(driver.readStream("sums")).as("held by the batch").isEmpty();
            assertThat(driver.completedComputations()).doesNotContain("batch");

            driver.completeSource("events-in");
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(driver.readStream("sums")).hasSize(2);
            assertThat(counter(driver, "completion")).isEqualTo(1.0);
            assertThat(driver.completedComputations()).containsExactlyInAnyOrder("read", "batch");
        }
    }

    @Test
    void shouldRejectTheFlagWhereFlowDoesNotAllowIt() {
        // "You set the allow_batching_with_relaxed_guarantees parameter in the parameters block of a
        // TSwiftMapComputation computation"
        PipelineSpec transform = PipelineSpec.builder(PIPELINE).stream("raw", EVENT).stream("events", EVENT)
                .stream("sums", SUM)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "events-in")).outputStreamIds("events"))
                .computation("batch", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .processingFunction(PerUserSums::new).outputStreamIds("sums").allowBatchingWithRelaxedGuarantees(true))
                .build();
        assertThatThrownBy(() -> FlowTestDriver.create(transform)).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("allow_batching_with_relaxed_guarantees applies only to SwiftMap computations");
    }
}
