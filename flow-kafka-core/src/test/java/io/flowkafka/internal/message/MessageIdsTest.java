package io.flowkafka.internal.message;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deterministic, compact, ordered message ids: a replay produces the same ids (sinks dedup by
 * them), siblings sort by output position, ids of one source partition sort by offset.
 */
class MessageIdsTest {
    private static final long COUNT = MessageIds.computationTag("count");
    private static final int ORIGIN = MessageIds.origin("clicks", 0);

    @TempDir
    Path stateDir;

    // ------------------------------------------------------------ unit

    @Test
    void shouldDeriveSameIdsFromSameInputs() {
        assertThat(MessageIds.origin("clicks", 3)).isEqualTo(MessageIds.origin("clicks", 3));
        assertThat(MessageIds.source(ORIGIN, 17L)).isEqualTo(MessageIds.source(MessageIds.origin("clicks", 0), 17L));
        assertThat(MessageIds.computationTag("count")).isEqualTo(COUNT);
        MessageId parent = MessageIds.source(ORIGIN, 17L);
        MessageId child = MessageIds.derive(parent, COUNT, 2);
        assertThat(MessageIds.derive(MessageId.of(parent.toBytes()), COUNT, 2)).isEqualTo(child);
        assertThat(MessageIds.derive(child, COUNT, 0)).isEqualTo(MessageIds.derive(child, COUNT, 0));
        assertThat(parent.size()).isEqualTo(MessageIds.SOURCE_ID_SIZE);
        assertThat(child.size()).isEqualTo(MessageIds.DERIVED_ID_SIZE);
    }

    @Test
    void shouldDistinguishPartitionsComputationsAndPositions() {
        assertThat(MessageIds.origin("clicks", 0)).isNotEqualTo(MessageIds.origin("clicks", 1))
                .isNotEqualTo(MessageIds.origin("views", 0));
        MessageId parent = MessageIds.source(ORIGIN, 5L);
        MessageId byCount = MessageIds.derive(parent, COUNT, 0);
        assertThat(MessageIds.derive(parent, MessageIds.computationTag("label"), 0)).isNotEqualTo(byCount);
        assertThat(MessageIds.derive(parent, COUNT, 1)).isNotEqualTo(byCount);
        assertThat(MessageIds.derive(byCount, COUNT, 0)).as("grandchild differs from child").isNotEqualTo(byCount);
        assertThat(MessageIds.derive(MessageIds.derive(parent, COUNT, 1), COUNT, 0))
                .as("lineage includes the parent's position")
                .isNotEqualTo(MessageIds.derive(MessageIds.derive(parent, COUNT, 0), COUNT, 0));
    }

    @Test
    void shouldOrderSiblingsByPosition() {
        for (MessageId parent : List.of(MessageIds.source(ORIGIN, 9L),
                MessageIds.derive(MessageIds.source(ORIGIN, 9L), COUNT, 4))) {
            List<MessageId> siblings = new ArrayList<>();
            for (int position = 0; position <= 300; position++) {
                siblings.add(MessageIds.derive(parent, COUNT, position));
            }
            assertThat(siblings).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
        }
    }

    @Test
    void shouldOrderIdsOfOneSourcePartitionByOffset() {
        long[] offsets = {0L, 1L, 127L, 128L, 255L, 256L, 65_535L, 1L << 32, (1L << 56) + 1, Long.MAX_VALUE};
        List<MessageId> sources = new ArrayList<>();
        List<MessageId> children = new ArrayList<>();
        List<MessageId> grandchildren = new ArrayList<>();
        Random random = new Random(3);
        for (long offset : offsets) {
            MessageId s = MessageIds.source(ORIGIN, offset);
            sources.add(s);
            // whatever the position and lineage, the source offset decides the order
            MessageId child = MessageIds.derive(s, COUNT, random.nextInt(1000));
            children.add(child);
            grandchildren.add(MessageIds.derive(child, MessageIds.computationTag("label"), random.nextInt(1000)));
        }
        assertThat(sources).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
        assertThat(children).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
        assertThat(grandchildren).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
    }

    @Test
    void shouldDeriveFromSetIndependentOfParentOrder() {
        MessageId a = MessageIds.source(ORIGIN, 1L);
        MessageId b = MessageIds.source(ORIGIN, 7L);
        MessageId c = MessageIds.derive(MessageIds.source(ORIGIN, 3L), COUNT, 2);
        MessageId expected = MessageIds.deriveFromSet(List.of(a, b, c), COUNT, 0);
        List<MessageId> parents = new ArrayList<>(List.of(a, b, c));
        Random random = new Random(5);
        for (int i = 0; i < 20; i++) {
            Collections.shuffle(parents, random);
            assertThat(MessageIds.deriveFromSet(parents, COUNT, 0)).as("parents %s", parents).isEqualTo(expected);
        }
        assertThat(MessageIds.deriveFromSet(List.of(a, b), COUNT, 0)).as("a smaller set").isNotEqualTo(expected);
        assertThat(MessageIds.deriveFromSet(List.of(a, b, MessageIds.source(ORIGIN, 4L)), COUNT, 0))
                .as("another set of the same size").isNotEqualTo(expected);
        assertThat(MessageIds.deriveFromSet(List.of(a, b, c), COUNT, 1)).as("another position").isNotEqualTo(expected);
        assertThat(MessageIds.deriveFromSet(List.of(a, b, c), MessageIds.computationTag("label"), 0))
                .as("another computation").isNotEqualTo(expected);
        assertThat(expected.size()).isEqualTo(MessageIds.DERIVED_ID_SIZE);
    }

    /**
     * Flow: "The combined message gets a MessageId derived deterministically from the set of its
     * parents' MessageIds": a set, so repeats do not count, and a set of one is an ordinary child.
     */
    @Test
    void shouldDeriveFromSetIgnoringRepeatsAndTreatASetOfOneAsOneParent() {
        MessageId a = MessageIds.source(ORIGIN, 1L);
        MessageId b = MessageIds.source(ORIGIN, 7L);
        assertThat(MessageIds.deriveFromSet(List.of(a, b, a, b, b), COUNT, 3))
                .isEqualTo(MessageIds.deriveFromSet(List.of(b, a), COUNT, 3));
        assertThat(MessageIds.deriveFromSet(List.of(a, a), COUNT, 2)).as("a set of one")
                .isEqualTo(MessageIds.derive(a, COUNT, 2));
        assertThat(MessageIds.deriveFromSet(List.of(a, b), COUNT, 0)).as("not the id of either parent's child")
                .isNotEqualTo(MessageIds.derive(a, COUNT, 0)).isNotEqualTo(MessageIds.derive(b, COUNT, 0));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MessageIds.deriveFromSet(List.of(), COUNT, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one parent");
    }

    @Test
    void shouldGiveDistinctIdsToOverlappingSets() {
        List<MessageId> inputs = new ArrayList<>();
        for (long offset = 0; offset < 6; offset++) {
            inputs.add(MessageIds.source(ORIGIN, offset));
        }
        java.util.Set<MessageId> ids = new java.util.HashSet<>();
        // every non-empty subset of six inputs, positions 0 and 1: all ids differ
        for (int mask = 1; mask < 64; mask++) {
            List<MessageId> set = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                if ((mask & (1 << i)) != 0) {
                    set.add(inputs.get(i));
                }
            }
            assertThat(ids.add(MessageIds.deriveFromSet(set, COUNT, 0))).as("set %s", set).isTrue();
            assertThat(ids.add(MessageIds.deriveFromSet(set, COUNT, 1))).as("set %s, position 1", set).isTrue();
        }
    }

    @Test
    void shouldPlaceSetDerivedIdAtItsLargestParent() {
        MessageId early = MessageIds.source(ORIGIN, 10L);
        MessageId late = MessageIds.source(ORIGIN, 20L);
        MessageId fromSet = MessageIds.deriveFromSet(List.of(late, early), COUNT, 0);
        assertThat(fromSet).isGreaterThan(MessageIds.derive(MessageIds.source(ORIGIN, 19L), COUNT, 999))
                .isLessThan(MessageIds.derive(MessageIds.source(ORIGIN, 21L), COUNT, 0));
    }

    @Test
    void shouldDeriveFromForeignIdOfAnotherSize() {
        MessageId foreign = MessageId.of(new byte[16]);
        MessageId child = MessageIds.derive(foreign, COUNT, 0);
        assertThat(child.size()).isEqualTo(MessageIds.DERIVED_ID_SIZE);
        assertThat(MessageIds.derive(MessageId.of(new byte[16]), COUNT, 0)).isEqualTo(child);
        byte[] other = new byte[16];
        other[15] = 1;
        assertThat(MessageIds.derive(MessageId.of(other), COUNT, 0)).as("all bytes of a foreign id count")
                .isNotEqualTo(child);
    }

    @Test
    void shouldDeriveFromForeignIdShorterThanASourceId() {
        for (int size = 1; size < MessageIds.SOURCE_ID_SIZE; size++) {
            MessageId foreign = MessageId.of(new byte[size]);
            assertThat(MessageIds.derive(foreign, COUNT, 0)).as("size %d", size)
                    .isEqualTo(MessageIds.derive(MessageId.of(new byte[size]), COUNT, 0));
            assertThat(MessageIds.deriveFromSet(List.of(foreign, MessageIds.source(ORIGIN, 1L)), COUNT, 0))
                    .as("size %d in a set", size).isNotNull();
        }
    }

    // ------------------------------------------------------------ on TopologyTestDriver

    /** Emits three outputs (siblings) per input. */
    static final class FanOut implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            for (int i = 0; i < 3; i++) {
                output.addMessage(context.createMessageBuilder("fanned")
                        .set("user", message.getPayload().get("user").toString()).set("n", (long) i).build());
            }
        }
    }

    private static final Schema CLICK = SchemaBuilder.record("Click").namespace("test").fields()
            .requiredString("user").requiredLong("ts").endRecord();
    private static final Schema FANNED = SchemaBuilder.record("Fanned").namespace("test").fields()
            .requiredString("user").requiredLong("n").endRecord();

    private static PipelineSpec spec() {
        return PipelineSpec.builder("ids")
                .stream("raw", CLICK)
                .stream("clicks", CLICK)
                .stream("fanned", FANNED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "ids-in"))
                        .outputStreamIds("clicks"))
                .computation("fan", c -> c.inputStreamIds("clicks")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .processingFunction(FanOut::new)
                        .outputStreamIds("fanned"))
                .build();
    }

    /** Runs the input through a fresh driver; returns the ids of {@code ids.clicks} then {@code ids.fanned}. */
    private List<List<MessageId>> run(Instant wallClock, String dir) {
        Properties props = new Properties();
        props.put("flow.state.stores", "memory");
        props.put("flow.topology.test.driver", "true");
        props.put("bootstrap.servers", "unused:9092");
        props.put("state.dir", stateDir.resolve(dir).toString());
        FlowRuntime runtime = FlowRuntime.create(spec(), props);
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), wallClock)) {
            TestInputTopic<String, String> in = driver.createInputTopic("ids-in", new StringSerializer(), new StringSerializer());
            for (String user : List.of("alice", "bob", "alice", "carol", "bob")) {
                in.pipeInput(new TestRecord<>(user, "{\"user\":\"" + user + "\",\"ts\":1}", Instant.ofEpochMilli(1000)));
            }
            List<List<MessageId>> ids = new ArrayList<>();
            for (String topic : List.of("ids.clicks", "ids.fanned")) {
                ids.add(driver.createOutputTopic(topic, new ByteArrayDeserializer(), new ByteArrayDeserializer())
                        .readRecordsToList().stream().filter(r -> !FlowHeaders.isControl(r.headers()))
                        .map(r -> FlowHeaders.read(r.headers()).messageId()).toList());
            }
            return ids;
        }
    }

    @Test
    void shouldWriteIdenticalIdsWhenTheSameInputRunsTwice() {
        List<List<MessageId>> first = run(Instant.parse("2026-01-01T00:00:00Z"), "first");
        List<List<MessageId>> second = run(Instant.parse("2031-06-01T12:00:00Z"), "second");

        assertThat(first.get(0)).hasSize(5);
        assertThat(first.get(1)).hasSize(15);
        assertThat(second).as("ids come from inputs, never from the clock").isEqualTo(first);
        // one source partition: ids follow the source offsets, siblings their position
        assertThat(first.get(0)).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
        assertThat(first.get(1)).isSortedAccordingTo(MessageId::compareTo).doesNotHaveDuplicates();
        long fanTag = MessageIds.computationTag("fan");
        for (int i = 0; i < 5; i++) {
            for (int position = 0; position < 3; position++) {
                assertThat(first.get(1).get(3 * i + position))
                        .isEqualTo(MessageIds.derive(first.get(0).get(i), fanTag, position));
            }
        }
    }
}
