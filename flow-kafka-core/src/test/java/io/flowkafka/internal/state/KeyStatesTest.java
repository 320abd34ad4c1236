package io.flowkafka.internal.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.StateRowCodec;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-key state through a process function on TopologyTestDriver: reads see the call's own
 * writes, an empty (cleared) state is an absent row, and a call that throws leaves nothing —
 * no store row, no changelog record, no output.
 *
 * <p>The function {@link Ops} interprets each input's {@code op} as a script of state operations
 * on state {@code v} of the input's key, then reports what {@code v.get()} returned after each step
 * on the stream {@code observed}.
 */
class KeyStatesTest {
    private static final String STORE = "keep.state";
    private static final String CHANGELOG = "states-keep.state-changelog";

    private static final Schema OP = SchemaBuilder.record("Op").namespace("test").fields()
            .requiredString("user").requiredString("op").requiredLong("value").endRecord();
    private static final Schema VALUE = SchemaBuilder.record("Value").namespace("test").fields()
            .requiredLong("value").endRecord();
    private static final Schema OBSERVED = SchemaBuilder.record("Observed").namespace("test").fields()
            .requiredString("user").requiredString("step").optionalLong("value").endRecord();

    /**
     * Steps separated by {@code ;}: {@code set} (to the input's value), {@code inc} (value + 1),
     * {@code clear}, {@code get}, {@code fail} (throw). Every step but {@code fail} reports the
     * state it then reads.
     */
    static final class Ops implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            long value = (Long) message.getPayload().get("value");
            StateAccessor<GenericRecord> v = context.getState("v");
            for (String step : message.getPayload().get("op").toString().split(";")) {
                switch (step) {
                    case "set" -> v.set(value(value));
                    case "inc" -> v.set(value((Long) v.get().orElseThrow().get("value") + 1));
                    case "clear" -> v.clear();
                    case "get" -> { }
                    case "fail" -> throw new IllegalStateException("failing on purpose for " + user);
                    default -> throw new IllegalArgumentException("unknown step " + step);
                }
                Optional<GenericRecord> now = context.getState("v").get();
                output.addMessage(context.createMessageBuilder("observed").set("user", user).set("step", step)
                        .set("value", now.map(r -> r.get("value")).orElse(null)).build());
            }
        }

        private static GenericRecord value(long v) {
            GenericRecord r = new GenericData.Record(VALUE);
            r.put("value", v);
            return r;
        }
    }

    private static PipelineSpec spec() {
        return PipelineSpec.builder("states")
                .stream("raw", OP)
                .stream("ops", OP)
                .stream("observed", OBSERVED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "ops-in"))
                        .outputStreamIds("ops"))
                .computation("keep", c -> c.inputStreamIds("ops")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("v", VALUE)
                        .processingFunction(Ops::new)
                        .outputStreamIds("observed"))
                .build();
    }

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<String, String> in;
    private TestOutputTopic<byte[], byte[]> observed;
    private TestOutputTopic<byte[], byte[]> changelog;
    private TestOutputTopic<byte[], byte[]> deadLetters;
    private final AvroCodec observedCodec = new AvroCodec(OBSERVED);

    @BeforeEach
    void start() {
        Properties props = new Properties();
        props.put("flow.state.stores", "memory");
        props.put("flow.topology.test.driver", "true");
        props.put("bootstrap.servers", "unused:9092");
        props.put("state.dir", stateDir.toString());
        FlowRuntime runtime = FlowRuntime.create(spec(), props);
        driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties());
        in = driver.createInputTopic("ops-in", new StringSerializer(), new StringSerializer());
        observed = driver.createOutputTopic("states.observed", new ByteArrayDeserializer(), new ByteArrayDeserializer());
        changelog = driver.createOutputTopic(CHANGELOG, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        deadLetters = driver.createOutputTopic("states.dlq", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    private void op(String user, String op, long value) {
        in.pipeInput(user, "{\"user\":\"" + user + "\",\"op\":\"" + op + "\",\"value\":" + value + "}");
    }

    /** "step=value" (or "step=absent") for each observation since the last call. */
    private List<String> observations() {
        List<String> out = new ArrayList<>();
        for (TestRecord<byte[], byte[]> r : observed.readRecordsToList()) {
            if (FlowHeaders.isControl(r.headers())) {
                continue; // watermarks
            }
            FlowHeaders.read(r.headers());
            GenericRecord o = observedCodec.decode(r.value());
            out.add(o.get("user") + ":" + o.get("step") + "=" + (o.get("value") == null ? "absent" : o.get("value")));
        }
        return out;
    }

    /** The rows of the computation's store, as state name suffix to decoded value. */
    private Map<String, Long> rows() {
        KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(STORE);
        Map<String, Long> rows = new HashMap<>();
        StateRowCodec codec = new StateRowCodec(VALUE); // rows carry their schema's fingerprint first
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                rows.put(describe(kv.key.get()), (Long) codec.decode(kv.value).get("value"));
            }
        }
        return rows;
    }

    /** A store key {@code key | name | name length (2)} as "user/name" (the user is the key's last bytes). */
    private static String describe(byte[] storeKey) {
        int nameLen = ((storeKey[storeKey.length - 2] & 0xff) << 8) | (storeKey[storeKey.length - 1] & 0xff);
        int keyLen = storeKey.length - 2 - nameLen;
        String name = new String(storeKey, keyLen, nameLen, StandardCharsets.UTF_8);
        // key = 8-byte hash | union index | zigzag length | utf-8 user
        String user = new String(storeKey, 8 + 2, keyLen - 8 - 2, StandardCharsets.UTF_8);
        return user + "/" + name;
    }

    @Test
    void shouldReadAbsentStateBeforeAnyWrite() {
        op("alice", "get", 0);
        assertThat(observations()).containsExactly("alice:get=absent");
        assertThat(rows()).isEmpty();
    }

    @Test
    void shouldSetAndGetAcrossCalls() {
        op("alice", "set", 5);
        op("bob", "set", 7);
        op("alice", "get", 0);
        assertThat(observations()).containsExactly("alice:set=5", "bob:set=7", "alice:get=5");
        assertThat(rows()).containsExactlyInAnyOrderEntriesOf(Map.of("alice/v", 5L, "bob/v", 7L));
    }

    @Test
    void shouldSeeWritesOfTheCallInLaterReadsOfTheSameCall() {
        op("alice", "set;inc;inc;get", 10);
        assertThat(observations()).containsExactly("alice:set=10", "alice:inc=11", "alice:inc=12", "alice:get=12");
        assertThat(rows()).containsExactly(Map.entry("alice/v", 12L));

        op("alice", "clear;get;set;get", 3);
        assertThat(observations()).containsExactly("alice:clear=absent", "alice:get=absent", "alice:set=3", "alice:get=3");
        assertThat(rows()).containsExactly(Map.entry("alice/v", 3L));
    }

    @Test
    void shouldDeleteTheRowWhenStateIsCleared() {
        op("alice", "set", 5);
        op("bob", "set", 6);
        changelog.readRecordsToList();

        op("alice", "clear", 0);
        op("alice", "get", 0);
        assertThat(observations()).containsExactly("alice:set=5", "bob:set=6", "alice:clear=absent", "alice:get=absent");
        assertThat(rows()).as("an empty state is an absent row").containsExactly(Map.entry("bob/v", 6L));
        assertThat(changelog.readRecordsToList()).as("the changelog deletes the row")
                .singleElement().satisfies(r -> assertThat(r.value()).isNull());
    }

    @Test
    void shouldWriteNothingWhenStateIsSetAndClearedInOneCall() {
        op("alice", "set;clear", 5);
        op("carol", "clear", 0);
        assertThat(observations()).containsExactly("alice:set=5", "alice:clear=absent", "carol:clear=absent");
        assertThat(rows()).isEmpty();
        assertThat(changelog.readRecordsToList()).allSatisfy(r -> assertThat(r.value()).isNull());
    }

    @Test
    void shouldLeaveNothingWhenTheCallThrows() {
        op("alice", "set", 5);
        changelog.readRecordsToList();
        observations();

        op("alice", "inc;inc;fail", 0);
        op("bob", "set;fail", 9);

        assertThat(observations()).as("no output of a failed call").isEmpty();
        assertThat(rows()).as("no state write of a failed call").containsExactly(Map.entry("alice/v", 5L));
        assertThat(changelog.readRecordsToList()).as("no changelog record of a failed call").isEmpty();
        assertThat(deadLetters.readRecordsToList()).hasSize(2).allSatisfy(r -> assertThat(
                new String(r.headers().lastHeader("flow.dlq.error.message").value(), StandardCharsets.UTF_8))
                .startsWith("failing on purpose for "));

        op("alice", "inc", 0);
        assertThat(observations()).as("the next call starts from the committed state").containsExactly("alice:inc=6");
        assertThat(rows()).containsExactly(Map.entry("alice/v", 6L));
    }
}
