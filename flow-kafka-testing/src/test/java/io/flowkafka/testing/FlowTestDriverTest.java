package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * {@link FlowTestDriver} on a three-computation pipeline defined here:
 *
 * <pre>
 *   topic clicks-in (JSON {"user", "page", "ts"})
 *     -> read  (Source)                          stream clicks
 *     -> count (Transform, group by user, state) stream counts   {"user", "count"}
 *     -> label (Transform, group by user)        stream labels   {"user", "count", "label"}
 *     -> KafkaSink                               topic click-labels (JSON, key = user)
 * </pre>
 *
 * {@code count} throws for page {@code boom} after it set its state and added an output.
 */
class FlowTestDriverTest {
    private static final String PIPELINE = "shop";
    private static final String SOURCE_TOPIC = "clicks-in";
    private static final String SINK_TOPIC = "click-labels";
    private static final long MS = 1_000_000L;

    static final Schema CLICK = SchemaBuilder.record("Click").namespace("test.shop").fields()
            .requiredString("user").requiredString("page").requiredLong("ts").endRecord();
    static final Schema COUNT = SchemaBuilder.record("UserCount").namespace("test.shop").fields()
            .requiredString("user").requiredLong("count").endRecord();
    static final Schema LABEL = SchemaBuilder.record("Label").namespace("test.shop").fields()
            .requiredString("user").requiredLong("count").requiredString("label").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("test.shop").fields()
            .requiredLong("count").endRecord();

    /** Counts clicks per user; page "boom" sets state and adds an output, then throws. */
    static final class ClickCounter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            StateAccessor<GenericRecord> total = context.getState("total");
            long count = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            boolean boom = "boom".equals(message.getPayload().get("page").toString());
            GenericRecord updated = new GenericData.Record(TOTAL);
            updated.put("count", boom ? count + 100 : count);
            total.set(updated);
            output.addMessage(context.createMessageBuilder("counts").set("user", user).set("count", count).build());
            if (boom) {
                throw new IllegalStateException("boom for " + user);
            }
        }
    }

    /** Labels each count; stateless. */
    static final class Labeler implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord in = message.getPayload();
            output.addMessage(context.createMessageBuilder("labels")
                    .set("user", in.get("user").toString())
                    .set("count", in.get("count"))
                    .set("label", in.get("user") + "#" + in.get("count"))
                    .build());
        }
    }

    static PipelineSpec spec() {
        return PipelineSpec.builder(PIPELINE)
                .stream("raw_clicks", CLICK)
                .stream("clicks", CLICK)
                .stream("counts", COUNT)
                .stream("labels", LABEL)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_clicks", "KafkaSource", Map.of("topics", SOURCE_TOPIC, "event_timestamp_column", "ts"))
                        .outputStreamIds("clicks"))
                .computation("count", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .processingFunction(ClickCounter::new)
                        .outputStreamIds("counts"))
                .computation("label", c -> c.inputStreamIds("counts")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .processingFunction(Labeler::new)
                        .outputStreamIds("labels")
                        .sink("labels_out", "KafkaSink", List.of("labels"), Map.of("topic", SINK_TOPIC, "key_column", "user")))
                .build();
    }

    private static String click(String user, String page, long ts) {
        return "{\"user\":\"" + user + "\",\"page\":\"" + page + "\",\"ts\":" + ts + "}";
    }

    private static String label(String user, long count) {
        return "{\"user\":\"" + user + "\",\"count\":" + count + ",\"label\":\"" + user + "#" + count + "\"}";
    }

    private static Map<String, Object> clickFields(String user) {
        return Map.of("user", user, "page", "home", "ts", 0L);
    }

    /** A record that cannot be decoded threw in no application code: its dead letter names no line of it. */
    @Test
    void shouldNameNoApplicationLineForARecordThatCannotBeDecoded() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", "not json");
            assertThat(driver.readTopic(PIPELINE + ".dlq")).singleElement().satisfies(d -> {
                assertThat(d.headers().lastHeader("flow.dlq.error.class")).isNotNull();
                assertThat(d.headers().lastHeader("flow.dlq.error.at")).isNull();
            });
        }
    }

    /**
     * paused, stopped and a computation's draining stop its sources reading on a broker; on the driver the records
     * piped meanwhile wait, and go on in order once the dynamic spec lets the reader go on.
     */
    @Test
    void shouldHoldRecordsPipedIntoTheSourcesOfAPausedStoppedOrDrainingPipeline() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            for (Map<String, ?> hold : List.of(Map.of("paused", true), Map.of("stopped", true),
                    Map.of("computations", Map.of("read", Map.of("draining", true))))) {
                driver.reconfigure(hold);
                driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1));
                driver.pipeSource(SOURCE_TOPIC, "bob", click("bob", "home", 2));
                assertThat(driver.readSinkJson(SINK_TOPIC)).as("nothing read while %s", hold).isEmpty();
                driver.reconfigure(Map.of("paused", false, "stopped", false,
                        "computations", Map.of("read", Map.of("draining", false))));
                assertThat(driver.readSinkJson(SINK_TOPIC)).as("read in order once released from %s", hold)
                        .hasSize(2).first().asString().contains("alice");
            }
        }
    }

    /** The wall clock only moves forward, with or without steps (the stepped form did nothing instead). */
    @Test
    void shouldRejectANegativeWallClockAdvanceWithOrWithoutSteps() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            assertThatThrownBy(() -> driver.advanceWallClockTime(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only moves forward");
            assertThatThrownBy(() -> driver.advanceWallClockTime(Duration.ofSeconds(-1), Duration.ofMillis(100)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only moves forward");
        }
    }

    @Test
    void shouldCountPerKeyThroughTwoHops() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));
            driver.pipeSource(SOURCE_TOPIC, "bob", click("bob", "home", 1001));
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "cart", 1002));

            List<TestRecord<byte[], byte[]>> sink = driver.readTopic(SINK_TOPIC);
            assertThat(sink).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactly(label("alice", 1), label("bob", 1), label("alice", 2));
            assertThat(sink).extracting(r -> new String(r.key(), StandardCharsets.UTF_8))
                    .containsExactly("alice", "bob", "alice");
            assertThat(sink).extracting(TestRecord::getRecordTime)
                    .containsExactly(Instant.ofEpochMilli(1000), Instant.ofEpochMilli(1001), Instant.ofEpochMilli(1002));

            driver.pipeSource(SOURCE_TOPIC, "bob", click("bob", "cart", 1003));
            assertThat(driver.readSinkJson(SINK_TOPIC)).as("reads consume").containsExactly(label("bob", 2));
            assertThat(driver.readDeadLetters()).isEmpty();
        }
    }

    /** The driver drops changelog records as it goes (every 16 calls); what a test can read stays until read. */
    @Test
    void shouldKeepEveryReadableRecordOverManyCalls() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            List<String> expected = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String user = "u" + (i % 7);
                driver.pipeSource(SOURCE_TOPIC, user, click(user, i == 50 ? "boom" : "home", 1000 + i));
                if (i != 50) {
                    expected.add(label(user, i / 7 + 1 - (i > 50 && i % 7 == 50 % 7 ? 1 : 0)));
                }
                if (i % 10 == 0) {
                    driver.advanceWallClockTime(Duration.ofMillis(200));
                }
            }
            assertThat(driver.readStream("clicks")).hasSize(100);
            assertThat(driver.readStream("counts")).hasSize(99);
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactlyElementsOf(expected);
            List<TestRecord<byte[], byte[]>> dead = driver.readTopic(PIPELINE + ".dlq");
            assertThat(dead).singleElement().satisfies(d -> {
                assertThat(new String(d.headers().lastHeader("flow.dlq.computation").value(), StandardCharsets.UTF_8))
                        .isEqualTo("count");
                assertThat(new String(d.headers().lastHeader("flow.dlq.error.at").value(), StandardCharsets.UTF_8))
                        .as("the line of the function that threw").startsWith(ClickCounter.class.getName() + ".onMessage(")
                        .contains("FlowTestDriverTest.java:");
                assertThat(d.headers().lastHeader("flow.wm"))
                        .as("the watermark the driver stamps on a message is not one of its input's headers on a broker")
                        .isNull();
            });
            assertThat(driver.stateForPayload("count", "total", "clicks", Map.of("user", "u0", "page", "home",
                    "ts", 0L))).hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(15L));
        }
    }

    @Test
    void shouldReadMiddleStreamWithMetadata() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));
            driver.advanceWallClockTime(Duration.ofSeconds(5));
            driver.pipeSource(SOURCE_TOPIC, "bob", click("bob", "home", 2000));

            List<Message> clicks = driver.readStream("clicks");
            List<Message> counts = driver.readStream("counts");

            assertThat(clicks).hasSize(2);
            assertThat(counts).hasSize(2);
            assertThat(counts).extracting(m -> m.getPayload().get("user").toString()).containsExactly("alice", "bob");
            assertThat(counts).extracting(Message::getStreamId).containsOnly("counts");
            assertThat(counts).extracting(m -> m.getKey().get("user")).containsExactly("alice", "bob");
            // ids: distinct, deterministic, and in source order
            assertThat(counts).extracting(Message::getMessageId).doesNotHaveDuplicates()
                    .isSortedAccordingTo(MessageId::compareTo);
            assertThat(clicks).extracting(Message::getMessageId).isSortedAccordingTo(MessageId::compareTo);
            // event time from the source's event_timestamp_column, inherited by default down the chain
            assertThat(clicks).extracting(Message::getEventTimestamp).containsExactly(1000 * MS, 2000 * MS);
            assertThat(counts).extracting(Message::getEventTimestamp).containsExactly(1000 * MS, 2000 * MS);
            // parents: the input's id; "clicks" derives from one source record (clicks-in-0, offsets 0 and 1)
            for (int i = 0; i < 2; i++) {
                assertThat(clicks.get(i).getParentIds()).singleElement()
                        .satisfies(source -> assertThat(source.size()).as("a source record's id").isEqualTo(12));
                assertThat(counts.get(i).getParentIds()).containsExactly(clicks.get(i).getMessageId());
            }
            assertThat(clicks.get(0).getParentIds().get(0)).isLessThan(clicks.get(1).getParentIds().get(0));
            // system time: the driver's wall clock
            long start = FlowTestDriver.DEFAULT_WALL_CLOCK_START.toEpochMilli() * MS;
            assertThat(counts).extracting(Message::getSystemTimestamp)
                    .containsExactly(start, start + Duration.ofSeconds(5).toNanos());
            assertThat(driver.readStream("counts")).as("reads consume").isEmpty();
        }
    }

    @Test
    void shouldWidenAnIntToALongFieldAsTheHarnessDoes() {
        // before: Map.of(..., "ts", 1000) was "not a valid record" on the driver, while the harness took it
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipe("clicks", Map.of("user", "alice", "page", "home", "ts", 1000), 7_000L);
            assertThat(driver.readStream("counts")).extracting(m -> m.getPayload().get("count")).containsExactly(1L);
        }
    }

    @Test
    void shouldPipeInternalStreamWithDeterministicIds() {
        List<MessageId> firstRun;
        List<Message> firstCounts;
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            MessageId a = driver.pipe("clicks", clickFields("alice"), 7_000L);
            MessageId b = driver.pipe("clicks", clickFields("alice"), 8_000L);
            assertThat(a).isNotEqualTo(b).isLessThan(b);
            assertThat(a.size()).isEqualTo(12);
            firstRun = List.of(a, b);
            firstCounts = driver.readStream("counts");
            assertThat(firstCounts).extracting(Message::getParentIds).containsExactly(List.of(a), List.of(b));
            assertThat(firstCounts).extracting(Message::getEventTimestamp).containsExactly(7_000L, 8_000L);
            assertThat(firstCounts).extracting(m -> m.getPayload().get("count")).containsExactly(1L, 2L);
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 1), label("alice", 2));
        }
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            GenericRecord payload = new GenericData.Record(CLICK);
            payload.put("user", "alice");
            payload.put("page", "home");
            payload.put("ts", 0L);
            assertThat(List.of(driver.pipe("clicks", payload, 7_000L), driver.pipe("clicks", payload, 8_000L)))
                    .isEqualTo(firstRun);
            assertThat(driver.readStream("counts")).extracting(Message::getMessageId)
                    .isEqualTo(firstCounts.stream().map(Message::getMessageId).toList());
        }
    }

    @Test
    void shouldInspectStateByKeyAndByPayload() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1));
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 2));
            driver.pipeSource(SOURCE_TOPIC, "bob", click("bob", "home", 3));

            assertThat(driver.stateForPayload("count", "total", "clicks", clickFields("alice")))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(2L));
            assertThat(driver.stateForPayload("count", "total", "clicks", clickFields("carol"))).isEmpty();

            Message bobCount = driver.readStream("counts").get(2);
            assertThat(driver.state("count", "total", bobCount.getKey()))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(1L));
        }
    }

    @Test
    void shouldRejectUnknownStateAndStreamWhenInspecting() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            assertThatThrownBy(() -> driver.stateForPayload("count", "missing", "clicks", clickFields("a")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("declares no Avro state 'missing'").hasMessageContaining("[total]");
            assertThatThrownBy(() -> driver.stateForPayload("count", "total", "counts", Map.of("user", "a", "count", 1L)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'counts' is not an input of computation 'count'");
            assertThatThrownBy(() -> driver.stateForPayload("nope", "total", "clicks", clickFields("a")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no computation 'nope'");
            assertThatThrownBy(() -> driver.stateForPayload("count", "total", "clicks", Map.of("page", "/")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the key of computation 'count' reads fields [user] of stream 'clicks'");
            assertThatThrownBy(() -> driver.stateForPayload("count", "total", "clicks", Map.of("usr", "a")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("stream 'clicks' has no field 'usr'");
            assertThat(driver.stateForPayload("count", "total", "clicks", Map.of("user", "a")))
                    .as("only the fields the key reads are needed").isEmpty();
        }
    }

    @Test
    void shouldSayWhyAMessageBefore1970CannotBeWrittenToAKafkaSink() {
        // before: the dead letter's reason was Kafka Streams' "Malformed Record"
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", -5_000));
            assertThat(driver.readTopic(SINK_TOPIC)).isEmpty();
            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("label");
                assertThat(d.errorMessage()).contains("computation 'label', sink 'labels_out'",
                        "event time 1969-12-31T23:59:55Z is before 1970", "timestamp: system");
            });
        }
    }

    @Test
    void shouldSendFailingCallToDeadLettersWithoutItsEffects() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "boom", 1001));

            List<FlowTestDriver.DeadLetter> dead = driver.readDeadLetters();
            assertThat(dead).hasSize(1);
            FlowTestDriver.DeadLetter d = dead.get(0);
            assertThat(d.computation()).isEqualTo("count");
            assertThat(d.errorClass()).isEqualTo(IllegalStateException.class.getName());
            assertThat(d.errorMessage()).isEqualTo("boom for alice");
            assertThat(d.stage()).startsWith("process message ");
            assertThat(d.sourceTopic()).isEqualTo(PIPELINE + ".clicks");
            assertThat(d.sourcePartition()).isZero();
            // offset 0: alice's first click, 1: the read task's first watermark control record, 2: this one
            assertThat(d.sourceOffset()).isEqualTo(2L);
            assertThat(d.value()).as("the original Avro payload").isNotEmpty();
            assertThat(d.errorAt()).as("the line of the function that threw")
                    .startsWith(ClickCounter.class.getName() + ".onMessage(").contains("FlowTestDriverTest.java:");

            // neither the state write nor the output of the failed call is visible
            assertThat(driver.stateForPayload("count", "total", "clicks", clickFields("alice")))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(1L));
            assertThat(driver.readPayloads("counts")).extracting(p -> p.get("count")).containsExactly(1L);
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 1));

            // later good records are processed, from the state before the failure
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1002));
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 2));
            assertThat(driver.readDeadLetters()).isEmpty();
        }
    }

    @Test
    void shouldSendRecordThatIsNotJsonToDeadLetters() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource(SOURCE_TOPIC, "x", "not json");
            driver.pipeSource(SOURCE_TOPIC, "y", "{\"user\":\"y\",\"ts\":5}");
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));

            List<FlowTestDriver.DeadLetter> dead = driver.readDeadLetters();
            assertThat(dead).hasSize(2);
            assertThat(dead.get(0).computation()).isEqualTo("read");
            assertThat(dead.get(0).errorClass()).isEqualTo(IllegalArgumentException.class.getName());
            assertThat(dead.get(0).errorMessage()).startsWith("value is not JSON");
            assertThat(dead.get(0).stage()).contains("decode the record of topic " + SOURCE_TOPIC);
            assertThat(dead.get(0).keyAsString()).isEqualTo("x");
            assertThat(dead.get(0).valueAsString()).isEqualTo("not json");
            assertThat(dead.get(0).sourceTopic()).isEqualTo(SOURCE_TOPIC);
            assertThat(dead.get(0).sourceOffset()).isZero();
            assertThat(dead.get(1).errorMessage()).contains("field 'Click.page' must be string but was missing");
            assertThat(dead.get(1).sourceOffset()).isEqualTo(1L);

            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 1));
        }
    }

    @Test
    void shouldSendRecordWithoutAValidTimestampToDeadLettersAndGoOn() {
        // Kafka Streams' default extractor fails the stream thread on such a record, before any processor
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            byte[] value = click("bob", "home", 1000).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            driver.pipeSource(SOURCE_TOPIC, "bob".getBytes(java.nio.charset.StandardCharsets.UTF_8), value,
                    java.time.Instant.ofEpochMilli(-1));
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));

            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("read");
                assertThat(d.errorMessage()).startsWith("record timestamp -1 is invalid");
                assertThat(d.valueAsString()).isEqualTo(new String(value, java.nio.charset.StandardCharsets.UTF_8));
            });
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 1));
        }
    }

    /** A Source computation without a process function reading Avro from {@code avro-in} into {@code clicks}. */
    private static PipelineSpec avroSource(UnaryOperator<ComputationSpec.Builder> sinks) {
        return PipelineSpec.builder("avro")
                .stream("raw", CLICK)
                .stream("clicks", CLICK)
                .computation("read", c -> sinks.apply(c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "avro-in", "format", "avro"))
                        .outputStreamIds("clicks")))
                .build();
    }

    @Test
    void shouldSendSourceRecordThatIsNotAvroToDeadLetters() throws IOException {
        PipelineSpec avro = avroSource(c -> c);
        try (FlowTestDriver driver = FlowTestDriver.create(avro)) {
            Instant t = Instant.parse("2026-02-01T00:00:00Z");
            driver.pipeSource("avro-in", null, "not avro at all".getBytes(StandardCharsets.UTF_8), t);
            GenericRecord ok = new GenericData.Record(CLICK);
            ok.put("user", "alice");
            ok.put("page", "home");
            ok.put("ts", 3L);
            driver.pipeSource("avro-in", null, avroBytes(ok), t);

            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.computation()).isEqualTo("read");
                assertThat(d.errorClass()).isEqualTo(IllegalArgumentException.class.getName());
                assertThat(d.errorMessage()).startsWith("bytes are not Avro of schema test.shop.Click");
                assertThat(d.valueAsString()).isEqualTo("not avro at all");
                assertThat(d.key()).isNull();
            });
            List<Message> clicks = driver.readStream("clicks");
            assertThat(clicks).extracting(m -> m.getPayload().get("user").toString()).containsExactly("alice");
            assertThat(clicks.get(0).getEventTimestamp()).as("record timestamp, no event_timestamp_column")
                    .isEqualTo(t.toEpochMilli() * MS);
        }
    }

    @Test
    void aSourceComputationPassesAvroOnAsItReadIt() throws IOException {
        // no process function: an Avro sink writes the input's bytes as they came; a sink reading a field sees it
        PipelineSpec avro = avroSource(c -> c
                .sink("copy", "KafkaSink", List.of("clicks"), Map.of("topic", "avro-out", "format", "avro"))
                .sink("keyed", "KafkaSink", List.of("clicks"), Map.of("topic", "json-out", "key_column", "user")));
        try (FlowTestDriver driver = FlowTestDriver.create(avro)) {
            Instant t = Instant.parse("2026-02-01T00:00:00Z");
            List<byte[]> in = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                GenericRecord r = new GenericData.Record(CLICK);
                r.put("user", "user-" + i);
                r.put("page", "page-" + i);
                r.put("ts", (long) i);
                in.add(avroBytes(r));
                driver.pipeSource("avro-in", null, in.get(i), t);
            }
            assertThat(driver.readTopic("avro-out")).extracting(TestRecord::value).containsExactlyElementsOf(in);
            assertThat(driver.readTopic("json-out")).extracting(r -> new String(r.key(), StandardCharsets.UTF_8))
                    .containsExactly("user-0", "user-1", "user-2");
            assertThat(driver.readDeadLetters()).isEmpty();
        }
    }

    @Test
    void shouldThrowOnBadRecordWhenDeadLettersAreDisabled() {
        Properties props = new Properties();
        props.put("flow.dead.letter.enabled", "false");
        try (FlowTestDriver driver = FlowTestDriver.create(spec(), props)) {
            driver.pipeSource(SOURCE_TOPIC, "alice", click("alice", "home", 1000));
            assertThat(driver.readSinkJson(SINK_TOPIC)).containsExactly(label("alice", 1));

            assertThatThrownBy(() -> driver.pipeSource(SOURCE_TOPIC, "x", "not json"))
                    .isInstanceOf(StreamsException.class)
                    .hasStackTraceContaining("value is not JSON");
        }
    }

    @Test
    void shouldThrowOnFailingCallWhenDeadLettersAreDisabled() {
        Properties props = new Properties();
        props.put("flow.dead.letter.enabled", "false");
        try (FlowTestDriver driver = FlowTestDriver.create(spec(), props)) {
            assertThatThrownBy(() -> driver.pipe("clicks", Map.of("user", "a", "page", "boom", "ts", 1L), 1L))
                    .isInstanceOf(StreamsException.class)
                    .hasStackTraceContaining("boom for a");
        }
    }

    /** Counts clicks per page, for a second reader of "clicks" with another key. */
    static final class PageCounter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> total = context.getState("total");
            long count = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            GenericRecord updated = new GenericData.Record(TOTAL);
            updated.put("count", count);
            total.set(updated);
            output.addMessage(context.createMessageBuilder("page_counts")
                    .set("user", message.getPayload().get("page").toString()).set("count", count).build());
        }
    }

    @Test
    void shouldPipeIntoEveryInternalTopicOfAStreamWithTopicPrefix() {
        PipelineSpec twoReaders = PipelineSpec.builder(PIPELINE)
                .stream("raw_clicks", CLICK)
                .stream("clicks", CLICK)
                .stream("counts", COUNT)
                .stream("page_counts", COUNT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_clicks", "KafkaSource", Map.of("topics", SOURCE_TOPIC))
                        .outputStreamIds("clicks"))
                .computation("count", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .processingFunction(ClickCounter::new)
                        .outputStreamIds("counts"))
                .computation("pages", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(page)")
                        .groupBy("page", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .processingFunction(PageCounter::new)
                        .outputStreamIds("page_counts"))
                .build();
        Properties props = new Properties();
        props.put("flow.topic.prefix", "env1.");
        try (FlowTestDriver driver = FlowTestDriver.create(twoReaders, props)) {
            MessageId id = driver.pipe("clicks", Map.of("user", "alice", "page", "home", "ts", 1L), 5L);
            driver.pipe("clicks", Map.of("user", "bob", "page", "home", "ts", 2L), 6L);
            driver.pipeSource(SOURCE_TOPIC, "carol", click("carol", "cart", 3));

            assertThat(driver.readPayloads("counts")).extracting(p -> p.get("user") + "=" + p.get("count"))
                    .containsExactly("alice=1", "bob=1", "carol=1");
            List<Message> pages = driver.readStream("page_counts");
            assertThat(pages).extracting(m -> m.getPayload().get("user") + "=" + m.getPayload().get("count"))
                    .containsExactly("home=1", "home=2", "cart=1");
            assertThat(pages.get(0).getParentIds()).containsExactly(id);
            assertThat(driver.stateForPayload("pages", "total", "clicks", Map.of("user", "x", "page", "home", "ts", 0L)))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(2L));
            assertThat(driver.stateForPayload("count", "total", "clicks", clickFields("bob")))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(1L));

            // the writer's copy for each reader, keyed by that reader's key; readStream reads the first
            List<Message> clicks = driver.readStream("clicks");
            assertThat(clicks).extracting(m -> m.getKey().get("user")).containsExactly("carol");
            List<TestRecord<byte[], byte[]>> forPages = driver.readTopic("env1." + PIPELINE + ".clicks.pages").stream()
                    .filter(r -> r.headers().lastHeader("flow.control") == null).toList();
            assertThat(forPages).hasSize(1);
            assertThat(driver.readTopic("env1." + PIPELINE + ".clicks.pages")).isEmpty();
            assertThatThrownBy(() -> driver.readTopic(PIPELINE + ".clicks"))
                    .hasMessageContaining("writes no topic").hasMessageContaining("env1." + PIPELINE + ".clicks");
        }
    }

    @Test
    void shouldStartWallClockAtConfiguredInstant() {
        Properties props = new Properties();
        props.put(FlowTestDriver.WALL_CLOCK_START_CONFIG, "2030-05-06T07:08:09Z");
        try (FlowTestDriver driver = FlowTestDriver.create(spec(), props)) {
            assertThat(driver.wallClockTime()).isEqualTo(Instant.parse("2030-05-06T07:08:09Z"));
            driver.advanceWallClockTime(Duration.ofMillis(1));
            driver.pipe("clicks", clickFields("alice"), 1L);
            assertThat(driver.readStream("counts")).singleElement()
                    .satisfies(m -> assertThat(m.getSystemTimestamp())
                            .isEqualTo(Instant.parse("2030-05-06T07:08:09.001Z").toEpochMilli() * MS));
        }
        assertThat(FlowTestDriver.DEFAULT_WALL_CLOCK_START).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void shouldRejectBadWallClockStart() {
        Properties props = new Properties();
        props.put(FlowTestDriver.WALL_CLOCK_START_CONFIG, "yesterday");
        assertThatThrownBy(() -> FlowTestDriver.create(spec(), props))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(FlowTestDriver.WALL_CLOCK_START_CONFIG)
                .hasMessageContaining("'yesterday'");
    }

    @Test
    void shouldRejectMisuseWithMessagesNamingTheFix() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            assertThatThrownBy(() -> driver.pipeSource("nope", "k", "{}"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("topic 'nope' is not read by a source").hasMessageContaining("[clicks-in]");
            assertThatThrownBy(() -> driver.pipe("raw_clicks", clickFields("a"), 1L))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a source stream").hasMessageContaining("pipeSource");
            assertThatThrownBy(() -> driver.pipe("clicks", Map.of("user", "a", "page", "p", "ts", 1L, "extra", 1), 1L))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has no field 'extra'");
            assertThatThrownBy(() -> driver.pipe("clicks", Map.of("user", "a", "page", "p", "ts", "late"), 1L))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a valid record of stream 'clicks'");
            assertThatThrownBy(() -> driver.pipe("nope", clickFields("a"), 1L))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no stream 'nope'");
            assertThatThrownBy(() -> driver.readStream("labels"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has no internal topic").hasMessageContaining(SINK_TOPIC);
            assertThatThrownBy(() -> driver.readTopic("nope"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("writes no topic 'nope'");
            assertThatThrownBy(() -> driver.advanceWallClockTime(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("only moves forward");
        }
    }

    @Test
    void shouldRejectInvalidSpecBeforeRunningAnything() {
        PipelineSpec broken = PipelineSpec.builder("broken")
                .stream("clicks", CLICK)
                .computation("count", c -> c.inputStreamIds("nowhere").processingFunction(ClickCounter::new))
                .build();
        assertThatThrownBy(() -> FlowTestDriver.create(broken))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("nowhere");
    }

    @Test
    void shouldRejectUseAfterCloseAndCloseIdempotently() {
        FlowTestDriver driver = FlowTestDriver.create(spec());
        driver.close();
        driver.close();
        assertThatThrownBy(() -> driver.pipeSource(SOURCE_TOPIC, "k", "{}"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
    }

    @Test
    void shouldExposeTheCompiledTopology() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            assertThat(driver.topology().describe().subtopologies()).hasSize(3);
        }
    }

    private static byte[] avroBytes(GenericRecord record) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, enc);
        enc.flush();
        return out.toByteArray();
    }
}
