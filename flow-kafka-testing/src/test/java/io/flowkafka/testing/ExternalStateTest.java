package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateJoinerSpec;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * External state on the test driver: a manager writes a table in its calls, a joiner reads it by the current key
 * (read-only), a state joiner reads another computation's state, a cache TTL bounds staleness, and a versioned
 * reference switches atomically.
 */
class ExternalStateTest {
    static final Schema REF = SchemaBuilder.record("Ref").namespace("ext").fields().requiredString("key")
            .requiredString("value").endRecord();
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("ext").fields().requiredString("key")
            .endRecord();
    static final Schema ENRICHED = SchemaBuilder.record("Enriched").namespace("ext").fields().requiredString("key")
            .requiredString("value").endRecord();
    static final Schema ROW = SchemaBuilder.record("Row").namespace("ext").fields().requiredString("value")
            .endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("ext").fields().requiredLong("n").endRecord();

    /** Writes each reference row to the table through the manager; an empty value clears the row. */
    public static final class Loader implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> row = context.getExternalState("/reference_state");
            String value = message.getPayload().get("value").toString();
            if (value.isEmpty()) {
                row.clear();
            } else {
                GenericRecord r = row.newRecord();
                r.put("value", value);
                row.set(r);
            }
            output.addMessage(context.createMessageBuilder("loaded").setPayload(message.getPayload()).build());
        }
    }

    /** Enriches an event with the joined row of its key ("missing" if none). */
    public static final class Enricher implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String name = context.getParameters().getOrDefault("joiner", "/reference_state").toString();
            String key = message.getPayload().get("key").toString();
            GenericRecord row = context.getExternalState(name).get().orElse(null);
            String value = row == null ? "missing" : row.get(row.getSchema().getField("value") != null ? "value" : "n")
                    .toString();
            output.addMessage(context.createMessageBuilder("enriched").set("key", key).set("value", value).build());
        }
    }

    /** Tries to write through its joiner. */
    public static final class Writer implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> row = context.getExternalState("/reference_state");
            GenericRecord r = row.newRecord();
            r.put("value", "x");
            row.set(r);
        }
    }

    /** Counts the events of a key in state "count". */
    public static final class Counter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> count = context.getState("count");
            GenericRecord c = count.get().orElseGet(count::newRecord);
            c.put("n", c.get("n") == null ? 1L : (Long) c.get("n") + 1);
            count.set(c);
        }
    }

    static ComputationSpec.Builder keyed(ComputationSpec.Builder c) {
        return c.groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null);
    }

    /** A pipeline builder with a source computation reading topic {@code <stream>-in} into each stream. */
    static PipelineSpec.Builder sources(PipelineSpec.Builder b, Map<String, Schema> streams) {
        streams.forEach((stream, schema) -> b.stream(stream + "_raw", schema).stream(stream, schema)
                .computation("read_" + stream, c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source(stream + "_raw", "KafkaSource", Map.of("topics", stream + "-in"))
                        .outputStreamIds(stream)));
        return b;
    }

    static PipelineSpec pipeline(UnaryOperator<ComputationSpec.Builder> enricher) {
        return sources(PipelineSpec.builder("ext"), Map.of("refs", REF, "events", EVENT)).stream("loaded", REF)
                .stream("enriched", ENRICHED)
                .computation("loader", c -> keyed(c.inputStreamIds("refs")).processingFunction(Loader::new)
                        .outputStreamIds("loaded")
                        .externalStateManager(ExternalStateManagerSpec.of("/reference_state", ROW)))
                .computation("enricher", c -> enricher.apply(keyed(c.inputStreamIds("events"))
                        .outputStreamIds("enriched")))
                .build();
    }

    static PipelineSpec joined(ExternalStateJoinerSpec joiner) {
        return pipeline(c -> c.processingFunction(Enricher::new).externalStateJoiner(joiner));
    }

    private static void ref(FlowTestDriver d, String key, String value) {
        d.pipeSource("refs-in", key, "{\"key\":\"" + key + "\",\"value\":\"" + value + "\"}");
    }

    private static String enrich(FlowTestDriver d, String key) {
        event(d, "events", key);
        var out = d.readPayloads("enriched");
        assertThat(out).hasSize(1);
        return out.get(0).get("value").toString();
    }

    private static void event(FlowTestDriver d, String stream, String key) {
        d.pipeSource(stream + "-in", key, "{\"key\":\"" + key + "\"}");
    }

    private static GenericRecord row(String value) {
        GenericRecord r = new org.apache.avro.generic.GenericData.Record(ROW);
        r.put("value", value);
        return r;
    }

    @Test
    void aManagerWritesItsTableInItsCallsAndAJoinerReadsTheRowOfItsKey() {
        try (FlowTestDriver d = FlowTestDriver.create(joined(ExternalStateJoinerSpec.of("/reference_state")))) {
            assertThat(enrich(d, "a")).isEqualTo("missing");
            ref(d, "a", "alpha");
            ref(d, "b", "beta");
            assertThat(d.readPayloads("loaded")).hasSize(2);
            assertThat(d.externalTable("loader", "/reference_state").get(Map.of("key", "a")))
                    .hasValueSatisfying(r -> assertThat(r.get("value").toString()).isEqualTo("alpha"));
            assertThat(enrich(d, "a")).isEqualTo("alpha");
            assertThat(enrich(d, "b")).isEqualTo("beta");
            ref(d, "a", "");
            assertThat(enrich(d, "a")).as("clear() deletes the row").isEqualTo("missing");
            assertThat(d.externalTable("/reference_state").get(Map.of("key", "a"))).isEmpty();
        }
    }

    @Test
    void aJoinerIsReadOnlyAndAWriteThroughItIsAClearError() {
        PipelineSpec spec = pipeline(c -> c.processingFunction(Writer::new)
                .externalStateJoiner(ExternalStateJoinerSpec.of("/reference_state")));
        try (FlowTestDriver d = FlowTestDriver.create(spec)) {
            event(d, "events", "a");
            assertThat(d.readDeadLetters()).singleElement().satisfies(l -> assertThat(l.errorMessage()).contains(
                    "external state '/reference_state' is read through a joiner of computation 'enricher'; joiners are "
                            + "read-only: write it from the computation that manages it (external_state_managers)"));
            assertThat(d.externalTable("/reference_state").get(Map.of("key", "a"))).isEmpty();
        }
    }

    @Test
    void aSeededRowIsSeenByTheJoinerInItsNextCall() {
        try (FlowTestDriver d = FlowTestDriver.create(joined(ExternalStateJoinerSpec.of("/reference_state")))) {
            d.externalTable("enricher", "/reference_state").put(Map.of("key", "z"), row("seeded"));
            assertThat(enrich(d, "z")).isEqualTo("seeded");
        }
    }

    @Test
    void aStateJoinerReadsTheCommittedStateOfAnotherComputation() {
        PipelineSpec spec = sources(PipelineSpec.builder("ext"), Map.of("events", EVENT, "events2", EVENT))
                .stream("enriched", ENRICHED)
                .computation("counter", c -> keyed(c.inputStreamIds("events")).processingFunction(Counter::new)
                        .state("count", COUNT))
                .computation("enricher", c -> keyed(c.inputStreamIds("events2")).processingFunction(Enricher::new)
                        .parameter("joiner", "/counts").outputStreamIds("enriched")
                        .stateJoiner(StateJoinerSpec.of("/counts", "counter", "count")))
                .build();
        try (FlowTestDriver d = FlowTestDriver.create(spec)) {
            event(d, "events", "k");
            event(d, "events", "k");
            event(d, "events2", "k");
            assertThat(d.readPayloads("enriched")).singleElement()
                    .satisfies(r -> assertThat(r.get("value").toString()).isEqualTo("2"));
        }
    }

    @Test
    void aCachedRowIsReusedForAtMostTheTtlByTheTasksClock() {
        Duration ttl = Duration.ofSeconds(10);
        try (FlowTestDriver d = FlowTestDriver.create(joined(ExternalStateJoinerSpec.of("/reference_state")
                .withCacheTtl(ttl)))) {
            ref(d, "a", "v1");
            assertThat(enrich(d, "a")).isEqualTo("v1");
            ref(d, "a", "v2");
            d.advanceWallClockTime(ttl.minusMillis(1));
            assertThat(enrich(d, "a")).as("within the TTL: the cached row").isEqualTo("v1");
            d.advanceWallClockTime(Duration.ofMillis(1));
            assertThat(enrich(d, "a")).as("a row is never served older than the TTL").isEqualTo("v2");
        }
    }

    @Test
    void aVersionedReferenceIsReadAtThePointersVersionAndSwitchedWithOneWrite() {
        PipelineSpec spec = pipeline(c -> c.processingFunction(Enricher::new).parameter("joiner", "/catalog")
                .externalStateJoiner(ExternalStateJoinerSpec.of("/catalog").withTopic("catalog", ROW).asVersioned()));
        try (FlowTestDriver d = FlowTestDriver.create(spec)) {
            DriverExternalTable catalog = d.externalTable("/catalog");
            catalog.put("v1", Map.of("key", "a"), row("one"));
            assertThat(enrich(d, "a")).as("no pointer yet").isEqualTo("missing");
            catalog.switchTo("v1");
            catalog.put("v2", Map.of("key", "a"), row("two"));
            assertThat(enrich(d, "a")).isEqualTo("one");
            catalog.switchTo("v2");
            assertThat(enrich(d, "a")).as("the same key after the switch").isEqualTo("two");
            assertThat(catalog.get(Map.of("key", "a"))).hasValueSatisfying(
                    r -> assertThat(r.get("value").toString()).isEqualTo("two"));
        }
    }

    @Test
    void theVersionedReferenceWriterWritesSwitchesAndDropsVersionsOnTheDriver() {
        PipelineSpec spec = pipeline(c -> c.processingFunction(Enricher::new).parameter("joiner", "/catalog")
                .externalStateJoiner(ExternalStateJoinerSpec.of("/catalog").withTopic("catalog", ROW).asVersioned()));
        try (FlowTestDriver d = FlowTestDriver.create(spec);
                io.flowkafka.runtime.VersionedReferenceWriter w = d.versionedReferenceWriter("enricher", "/catalog")) {
            w.writeVersion("v1", Map.of(w.key(Map.of("key", "a")), row("one"), w.key(Map.of("key", "b")), row("b1")));
            w.switchTo("v1");
            assertThat(enrich(d, "a")).isEqualTo("one");
            w.writeVersion("v2", Map.of(w.key(Map.of("key", "a")), row("two")));
            assertThat(enrich(d, "a")).as("v2 written but not switched to").isEqualTo("one");
            w.switchTo("v2");
            assertThat(w.currentVersion()).contains("v2");
            assertThat(enrich(d, "a")).isEqualTo("two");
            assertThat(enrich(d, "b")).as("v2 has no row of b: versions never mix").isEqualTo("missing");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.dropVersion("v2"))
                    .hasMessageContaining("is the current one");
            assertThat(w.dropVersion("v1")).isEqualTo(2);
            w.switchTo("v1");
            assertThat(enrich(d, "a")).as("a dropped version has no rows").isEqualTo("missing");
        }
    }
}
