package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reference 000's {@code external_names} rules ("Static spec parameters"), each quoted and shown on
 * {@link FlowTestDriver}.
 *
 * <p>Pipeline: source {@code in} (JSON {@code {"key", "cmd", "value"}}) feeds computation {@code keeper}, whose
 * {@code cmd} is {@code state} (sets its internal state {@code total}) or {@code managed} (sets its managed table
 * {@code /managed}); it also joins the table {@code /joined} (written outside the pipeline, seeded by the test).
 * Its key visitor {@code v} reports each visit on {@code visits} with the rows it sees, and clears the
 * {@code /managed} row when the {@code clear} parameter is set.
 */
class ExternalNamesTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("xn").fields()
            .requiredString("key").requiredString("cmd").optionalString("value").endRecord();
    static final Schema ROW = SchemaBuilder.record("Row").namespace("xn").fields().requiredString("value").endRecord();
    static final Schema VISITED = SchemaBuilder.record("Visited").namespace("xn").fields()
            .requiredString("key").optionalString("total").optionalString("managed").optionalString("joined")
            .requiredLong("pass").endRecord();
    static final String JOINED_TOPIC = "xn.joined-rows";

    /** Keeps a state and a managed row per key; reports what each visit sees. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord row = new GenericData.Record(ROW);
            row.put("value", String.valueOf(message.getPayload().get("value")));
            if (message.getPayload().get("cmd").toString().equals("state")) {
                context.getState("total").set(row);
            } else {
                context.getExternalState("/managed").set(row);
            }
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("visits").set("key", visit.getKey().get("key").toString())
                    .set("total", value(context.getState("total").get()))
                    .set("managed", value(context.getExternalState("/managed").get()))
                    .set("joined", value(context.getExternalState("/joined").get()))
                    .set("pass", visit.getPass()).build());
            if (Boolean.parseBoolean(String.valueOf(context.getParameters().get("clear")))) {
                context.getExternalState("/managed").clear();
            }
        }

        private static String value(Optional<GenericRecord> row) {
            return row.map(r -> r.get("value").toString()).orElse(null);
        }
    }

    /** Does nothing: its joiner lets the test read the managed table's topic as readers see it. */
    public static final class Watcher implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private FlowTestDriver driver;
    private final List<GenericRecord> visits = new ArrayList<>();

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no call failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    static PipelineSpec spec(KeyVisitorStreamSpec visitor, boolean clear) {
        return PipelineSpec.builder("xn")
                .stream("raw", EVENT).stream("events", EVENT).stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new).state("total", ROW)
                        .externalStateManager(ExternalStateManagerSpec.of("/managed", ROW))
                        .externalStateJoiner(ExternalStateJoinerSpec.of("/joined").withTopic(JOINED_TOPIC, ROW))
                        .parameter("clear", clear)
                        .outputStreamIds("visits").keyVisitorStream(visitor)
                        .streamsDependency("visits", List.of("events", visitor.id())))
                // reads /managed from its table topic (a global store): sees what the manager published
                .computation("watcher", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Watcher::new)
                        .externalStateJoiner(ExternalStateJoinerSpec.of("/managed")))
                .build();
    }

    /** Starts the pipeline: keys {@code s} (state only), {@code m} (managed row only), {@code sm} (both), {@code j}
     * (joined table only). */
    private void start(KeyVisitorStreamSpec.Builder visitor, boolean clear) {
        driver = FlowTestDriver.create(spec(visitor.period(Duration.ofSeconds(10)).build(), clear));
        send("s", "state", "s-total");
        send("m", "managed", "m-row");
        send("sm", "state", "sm-total");
        send("sm", "managed", "sm-row");
        GenericRecord joined = new GenericData.Record(ROW);
        joined.put("value", "j-row");
        driver.externalTable("keeper", "/joined").put(Map.of("key", "j"), joined);
        GenericRecord joinedToo = new GenericData.Record(ROW);
        joinedToo.put("value", "sm-joined");
        driver.externalTable("keeper", "/joined").put(Map.of("key", "sm"), joinedToo);
    }

    private void send(String key, String cmd, String value) {
        driver.pipeSource("in", key, "{\"key\":\"" + key + "\",\"cmd\":\"" + cmd + "\",\"value\":\"" + value + "\"}");
    }

    /** The visits of pass 0 by key, after the pass completed. */
    private Map<String, GenericRecord> firstPass() {
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100));
        visits.addAll(driver.readPayloads("visits"));
        Map<String, GenericRecord> byKey = new LinkedHashMap<>();
        for (GenericRecord v : visits) {
            if ((Long) v.get("pass") == 0) {
                assertThat(byKey.put(v.get("key").toString(), v)).as("one visit per key and pass").isNull();
            }
        }
        return byKey;
    }

    @Test
    void shouldScanOnlyTheListedExternalStateWhenNamesIsAbsent() {
        // "If only external_names is specified (without names), only the listed external state is scanned; internal
        // states aren't scanned."
        start(KeyVisitorStreamSpec.builder("v").externalNames("/managed"), false);
        Map<String, GenericRecord> pass = firstPass();
        assertThat(pass.keySet()).containsExactlyInAnyOrder("m", "sm");
        assertThat(pass.get("m").get("managed")).hasToString("m-row");
        assertThat(pass.get("sm").get("total")).as("the visit still reads the key's states").hasToString("sm-total");
    }

    @Test
    void shouldScanInternalStatesButNoExternalStateWhenNeitherIsGiven() {
        // "If neither names nor external_names is specified, all internal states are scanned, but external state and
        // joiners aren't"
        start(KeyVisitorStreamSpec.builder("v"), false);
        assertThat(firstPass().keySet()).containsExactlyInAnyOrder("s", "sm");
    }

    @Test
    void shouldScanAJoinerOnlyIfListedAndVisitAKeyThatIsOnlyInItsTable() {
        // "a joiner is scanned only if explicitly listed in external_names"
        start(KeyVisitorStreamSpec.builder("v").names("total"), false);
        assertThat(firstPass().keySet()).containsExactlyInAnyOrder("s", "sm");
        close();
        visits.clear();
        // "Table keys take part in the scan on an equal footing with state keys: a visit arrives even for a key
        // that isn't yet in the computation's own state." The row is visible read-only in the visit.
        start(KeyVisitorStreamSpec.builder("v").names("total").externalNames("/joined"), false);
        Map<String, GenericRecord> pass = firstPass();
        assertThat(pass.keySet()).containsExactlyInAnyOrder("s", "sm", "j");
        assertThat(pass.get("j").get("joined")).hasToString("j-row");
        assertThat(pass.get("j").get("total")).isNull();
        assertThat(pass.get("sm").get("joined")).hasToString("sm-joined");
    }

    @Test
    void shouldDeadLetterAScannedRowWhoseKeyIsNotTheComputationsAndVisitTheOthers() {
        // rows written outside the pipeline into the joiner's topic, with keys of no group_by_schema: one too short
        // for the hash, one with the hash and then no Avro of the key columns (union index 5)
        start(KeyVisitorStreamSpec.builder("v").names("total").externalNames("/joined"), false);
        DriverExternalTable joined = driver.externalTable("keeper", "/joined");
        joined.putBytes(new byte[] {1, 2, 3}, new byte[] {0});
        joined.putBytes(new byte[] {(byte) 0x80, 0, 0, 0, 0, 0, 0, 0, 10}, new byte[] {0});
        assertThat(firstPass().keySet()).as("the other keys visited").containsExactlyInAnyOrder("s", "sm", "j");
        List<FlowTestDriver.DeadLetter> letters = driver.readDeadLetters(); // a letter per bad key and pass
        assertThat(letters).isNotEmpty().allSatisfy(l -> {
            assertThat(l.computation()).isEqualTo("keeper");
            assertThat(l.stage()).contains("decode the key of visit").contains("of stream v")
                    .contains("group_by_schema");
        });
        assertThat(letters.stream().map(l -> HexFormat.of().formatHex(l.key())).distinct())
                .containsExactlyInAnyOrder("010203", "80000000000000000a");
    }

    @Test
    void shouldDeleteTheExternalRowAndPublishATombstoneWhenAVisitClearsIt() {
        // "This lets the visitor scan the external state [...] and evict outdated records via clear() in the visit
        // handler."
        start(KeyVisitorStreamSpec.builder("v").externalNames("/managed"), true);
        DriverExternalTable published = driver.externalTable("watcher", "/managed"); // the table topic, read back
        assertThat(published.get(Map.of("key", "m"))).as("the manager published the row").isPresent();
        assertThat(firstPass().keySet()).containsExactlyInAnyOrder("m", "sm");
        assertThat(driver.externalTable("keeper", "/managed").get(Map.of("key", "m"))).isEmpty();
        assertThat(driver.externalTable("keeper", "/managed").get(Map.of("key", "sm"))).isEmpty();
        assertThat(published.get(Map.of("key", "m"))).as("a tombstone was published").isEmpty();
        assertThat(published.get(Map.of("key", "sm"))).as("a tombstone was published").isEmpty();
        assertThat(driver.state("keeper", "total", Map.of("key", "sm"))).as("internal state untouched").isPresent();
        // the next pass finds nothing to visit
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100));
        assertThat(driver.readPayloads("visits")).isEmpty();
    }
}
