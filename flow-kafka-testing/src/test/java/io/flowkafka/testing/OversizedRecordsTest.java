package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * A state row or an output larger than Kafka Streams' producer sends ({@code max.request.size}) can never be
 * written: the call that writes it fails, its input goes to the dead-letter topic with the reason, none of its effects
 * are kept, and the pipeline goes on (DESIGN.md: no crash of the whole pipeline for one bad record). Before, the
 * producer refused the changelog record at the commit, the task's transaction aborted, and the replay met it again.
 */
class OversizedRecordsTest {
    private static final String SOURCE_TOPIC = "pages-in";
    private static final String SINK_TOPIC = "pages-out";
    private static final int LIMIT = 2000;

    static final Schema PAGE = SchemaBuilder.record("Page").namespace("test.big").fields()
            .requiredString("user").requiredString("page").endRecord();
    static final Schema LAST = SchemaBuilder.record("Last").namespace("test.big").fields()
            .requiredString("page").endRecord();

    /**
     * Remembers each user's last page and writes it out; page {@code big-state} makes the state row 5000 bytes,
     * {@code big-output} the output.
     */
    static final class Remember implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            String page = message.getPayload().get("page").toString();
            GenericRecord last = new GenericData.Record(LAST);
            if (page.equals("big-then-small")) {
                last.put("page", "s".repeat(5000));
                context.getState("last").set(last);
                last.put("page", "small");
                context.getState("last").set(last); // what the call writes: its last value
            } else {
                last.put("page", page.equals("big-state") ? "s".repeat(5000) : page);
                try {
                    context.getState("last").set(last);
                } catch (RuntimeException e) {
                    // a function that swallows failures must not make an oversized row disappear silently
                    last.put("page", "swallowed: " + e.getMessage());
                    context.getState("last").set(last);
                }
            }
            output.addMessage(context.createMessageBuilder("seen").set("user", user)
                    .set("page", page.equals("big-output") ? "o".repeat(5000) : page).build());
        }
    }

    static PipelineSpec spec() {
        return PipelineSpec.builder("big")
                .stream("raw", PAGE).stream("pages", PAGE).stream("seen", PAGE)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", SOURCE_TOPIC))
                        .outputStreamIds("pages"))
                .computation("remember", c -> c.inputStreamIds("pages")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("last", LAST).processingFunction(Remember::new).outputStreamIds("seen")
                        .sink("out", "KafkaSink", List.of("seen"), Map.of("topic", SINK_TOPIC, "key_column", "user")))
                .build();
    }

    private static String page(String user, String page) {
        return "{\"user\":\"" + user + "\",\"page\":\"" + page + "\"}";
    }

    private static FlowTestDriver driver() {
        Properties props = new Properties();
        props.put("producer.max.request.size", String.valueOf(LIMIT));
        return FlowTestDriver.create(spec(), props);
    }

    @Test
    void shouldDeadLetterTheInputOfAStateRowLargerThanTheProducerSendsAndKeepTheRowBefore() {
        try (FlowTestDriver driver = driver()) {
            driver.pipeSource(SOURCE_TOPIC, "alice", page("alice", "home"));
            driver.pipeSource(SOURCE_TOPIC, "alice", page("alice", "big-state"));
            driver.pipeSource(SOURCE_TOPIC, "alice", page("alice", "cart"));

            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(page("alice", "home"), page("alice", "cart"));
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("remember");
                assertThat(d.stage()).startsWith("write the state of message ");
                assertThat(d.errorClass()).isEqualTo("io.flowkafka.internal.dlq.RejectedRecordException");
                // the value: the row and the 10 bytes of its schema's fingerprint
                assertThat(d.errorMessage()).startsWith("state 'last' of computation 'remember' (a row of its changelog "
                        + "topic) would be a record of ").contains("5012-byte value")
                        .contains("more than the producer's max.request.size of 2000 bytes")
                        .contains("keep state rows small");
            });
            assertThat(driver.stateForPayload("remember", "last", "pages", Map.of("user", "alice", "page", "x")))
                    .hasValueSatisfying(l -> assertThat(l.get("page").toString()).isEqualTo("cart"));
        }
    }

    /**
     * An input larger than the producer sends (its source topic takes larger records) fails where the source writes
     * it on; its dead letter, too large as well, goes without the input's value, saying so, instead of failing the
     * task on every replay.
     */
    @Test
    void shouldDeadLetterAnInputTooLargeToCopyWithoutItsValue() {
        try (FlowTestDriver driver = driver()) {
            String huge = page("dave", "x".repeat(5000));
            driver.pipeSource(SOURCE_TOPIC, "dave", huge);
            driver.pipeSource(SOURCE_TOPIC, "dave", page("dave", "home"));

            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(page("dave", "home"));
            var dead = driver.readTopic("big.dlq");
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(r.value()).as("left out").isNull();
                assertThat(new String(r.key(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("dave");
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("read");
                assertThat(header(r, "flow.dlq.error.message")).startsWith("this output to topic big.pages would be a "
                        + "record of ");
                assertThat(header(r, "flow.dlq.offset")).isEqualTo("0");
                assertThat(header(r, "flow.dlq.omitted")).startsWith("the input's value (" + huge.length()
                        + " bytes): the dead letter would be a record of ")
                        .contains("more than the producer's max.request.size of 2000 bytes");
            });
        }
    }

    static final Schema VISIT = SchemaBuilder.record("Visit").namespace("test.big").fields()
            .requiredString("user").requiredLong("ts").endRecord();

    /** Adds a reminder a minute after each visit, and nothing else; the reminder writes the user to the sink. */
    static final class Remind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer(message.getEventTimestamp() + 60_000_000_000L, message.getEventTimestamp());
        }

        @Override
        public void onTimer(io.flowkafka.api.Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("reminded").set("user", timer.getKey().get("user"))
                    .set("ts", timer.getTriggerTimestamp() / 1_000_000L).build());
        }
    }

    /** A keyed source (no hop before the timer, so a long key reaches the timers store) -> remind -> sink. */
    static PipelineSpec timersSpec() {
        return PipelineSpec.builder("rem").stream("visits", VISIT).stream("reminded", VISIT)
                .computation("remind", c -> c
                        .source("visits", "KafkaSource", Map.of("topics", "visits-in", "key_partitioned", true))
                        .watermarkStrategy(io.flowkafka.spec.WatermarkStrategy.DEFAULT
                                .withOutOfOrdernessBound(java.time.Duration.ZERO).withTimestampColumn("ts"))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .timer("remind", Map.of()).processingFunction(Remind::new).outputStreamIds("reminded")
                        .sink("out", "KafkaSink", List.of("reminded"), Map.of("topic", "reminded-out",
                                "key_column", "user")))
                .build();
    }

    private static void visit(FlowTestDriver driver, String user, long tsMs) {
        driver.pipeSource("visits-in", user.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                ("{\"user\":\"" + user + "\",\"ts\":" + tsMs + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                java.time.Instant.ofEpochMilli(tsMs));
    }

    /**
     * A timer row holds the group-by key twice (in its key and its value): a key that fits a state row may make a
     * timer row larger than the producer sends. The call adding it fails, its input goes to the dead-letter topic,
     * no timer is kept, and the other keys' timers fire as before.
     */
    @Test
    void shouldDeadLetterTheInputOfATimerRowLargerThanTheProducerSendsAndGoOn() {
        String longUser = "u".repeat(1200);
        Properties props = new Properties();
        props.put("producer.max.request.size", String.valueOf(LIMIT));
        try (FlowTestDriver driver = FlowTestDriver.create(timersSpec(), props)) {
            visit(driver, "ann", 1_000);
            visit(driver, longUser, 2_000);
            visit(driver, "bob", 100_000);

            assertThat(driver.readSinkJson("reminded-out")).as("ann's reminder fired, the long key's was never kept")
                    .containsExactly("{\"user\":\"ann\",\"ts\":61000}");
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("remind");
                assertThat(d.stage()).startsWith("write the timers of message ");
                assertThat(d.errorClass()).isEqualTo("io.flowkafka.internal.dlq.RejectedRecordException");
                assertThat(d.errorMessage()).startsWith("a timer of timer stream 'remind' of computation 'remind' (a row "
                        + "of its timers changelog topic) would be a record of ")
                        .contains("more than the producer's max.request.size of 2000 bytes")
                        .contains("keep group-by keys small");
            });
            assertThat(driver.pendingTimers("remind")).singleElement()
                    .satisfies(t -> assertThat(t.getKey().get("user").toString()).isEqualTo("bob"));
        }
    }

    private static String header(org.apache.kafka.streams.test.TestRecord<byte[], byte[]> r, String key) {
        var h = r.headers().lastHeader(key);
        return h == null ? null : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** What counts is the row a call writes, its last value for the key, not one it overwrote. */
    @Test
    void shouldWriteARowThatWasLargeOnlyInTheMiddleOfTheCall() {
        try (FlowTestDriver driver = driver()) {
            driver.pipeSource(SOURCE_TOPIC, "erin", page("erin", "big-then-small"));
            assertThat(driver.readDeadLetters()).isEmpty();
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(page("erin", "big-then-small"));
            assertThat(driver.stateForPayload("remember", "last", "pages", Map.of("user", "erin", "page", "x")))
                    .hasValueSatisfying(l -> assertThat(l.get("page").toString()).isEqualTo("small"));
        }
    }

    @Test
    void shouldDeadLetterTheInputOfAnOutputLargerThanTheProducerSendsAndDropTheCallsStateWrite() {
        try (FlowTestDriver driver = driver()) {
            driver.pipeSource(SOURCE_TOPIC, "bob", page("bob", "home"));
            driver.pipeSource(SOURCE_TOPIC, "bob", page("bob", "big-output"));

            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(page("bob", "home"));
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("remember");
                assertThat(d.stage()).startsWith("write the outputs of message ");
                assertThat(d.errorMessage()).startsWith("this output to topic " + SINK_TOPIC + " would be a record of ")
                        .contains("more than the producer's max.request.size of 2000 bytes: it can never be written");
            });
            assertThat(driver.stateForPayload("remember", "last", "pages", Map.of("user", "bob", "page", "x")))
                    .as("the failed call's state write is dropped")
                    .hasValueSatisfying(l -> assertThat(l.get("page").toString()).isEqualTo("home"));
        }
    }
}
