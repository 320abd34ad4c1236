package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TimerStore#storeBuilders} in a topology on TopologyTestDriver: both stores are
 * changelogged, an aborted call writes no changelog record, and replaying the two changelogs into
 * empty stores (what a restore does) gives a new {@link TimerStore} the same answers.
 *
 * <p>The processor reads commands: {@code add <key> <trigger> <event>}, {@code fail <key> <trigger>}
 * (adds, then the call throws and aborts) and {@code fire <watermark>} (fires due timers in batches
 * of 2, one committed call each, and forwards {@code key@trigger}).
 */
class TimerStoreTopologyTest {
    private static final String APP = "timers-app";
    private static final String COMPUTATION = "comp";

    @TempDir
    File stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<String, String> in;
    private TestOutputTopic<String, String> fired;
    private TestOutputTopic<byte[], byte[]> timersChangelog;
    private TestOutputTopic<byte[], byte[]> holdsChangelog;

    static final class TimerProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private TimerStore timers;
        private long nextId;

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
            KeyValueStore<Bytes, byte[]> t = context.getStateStore(TimerStore.timersStoreName(COMPUTATION));
            KeyValueStore<Bytes, byte[]> h = context.getStateStore(TimerStore.holdsStoreName(COMPUTATION));
            timers = new TimerStore(t, h, List.of("s"), new boolean[] {true});
        }

        @Override
        public void process(Record<String, String> record) {
            for (String command : record.value().split(";")) { // several commands in one record: one commit interval
                run(command.trim().split(" "), record);
            }
        }

        private void run(String[] cmd, Record<String, String> record) {
            switch (cmd[0]) {
                case "add", "fail" -> {
                    long trigger = Long.parseLong(cmd[2]);
                    long event = cmd.length > 3 ? Long.parseLong(cmd[3]) : trigger;
                    timers.add(new PendingTimer(0, trigger, event, record.timestamp(), AbstractTimerStoreTest.key(cmd[1]),
                            new byte[] {1, (byte) nextId++}, List.of()));
                    if (cmd[0].equals("fail")) {
                        timers.abortCall();
                    } else {
                        timers.commitCall();
                    }
                }
                case "fire" -> {
                    long watermark = Long.parseLong(cmd[1]);
                    for (List<PendingTimer> due = timers.due(0, watermark, 2); !due.isEmpty(); due = timers.due(0, watermark, 2)) {
                        for (PendingTimer t : due) {
                            timers.delete(t);
                            timers.commitCall();
                            String name = new String(t.encodedKey(), 8, 4, StandardCharsets.UTF_8).trim();
                            context.forward(new Record<>(name, name + "@" + t.triggerTs(), record.timestamp()));
                        }
                    }
                }
                default -> throw new IllegalArgumentException("unknown command " + record.value());
            }
        }
    }

    @BeforeEach
    void start() {
        start(false);
    }

    /** A topology over the timer stores as the compiler builds them: behind flow-kafka's write-back cache when {@code cached}. */
    private void start(boolean cached) {
        if (driver != null) {
            driver.close();
        }
        Topology topology = new Topology();
        topology.addSource("in", new StringDeserializer(), new StringDeserializer(), "commands");
        topology.addProcessor("timers", TimerProcessor::new, "in");
        for (StoreBuilder<KeyValueStore<Bytes, byte[]>> b : cached
                ? TimerStore.storeBuilders(COMPUTATION, true, true, new io.flowkafka.internal.streams.WriteBackStore.Budget())
                : TimerStore.storeBuilders(COMPUTATION, true)) {
            topology.addStateStore(b, "timers");
        }
        topology.addSink("out", "fired", new StringSerializer(), new StringSerializer(), "timers");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.getPath());
        driver = new TopologyTestDriver(topology, props);
        in = driver.createInputTopic("commands", new StringSerializer(), new StringSerializer());
        fired = driver.createOutputTopic("fired", new StringDeserializer(), new StringDeserializer());
        timersChangelog = driver.createOutputTopic(APP + "-" + COMPUTATION + ".timers-changelog",
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        holdsChangelog = driver.createOutputTopic(APP + "-" + COMPUTATION + ".timer-holds-changelog",
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    @Test
    void shouldBuildPersistentChangeloggedUncachedStores() {
        List<StoreBuilder<KeyValueStore<Bytes, byte[]>>> builders = TimerStore.storeBuilders(COMPUTATION, true);
        assertThat(builders).extracting(StoreBuilder::name).containsExactly("comp.timers", "comp.timer-holds");
        assertThat(builders).allSatisfy(b -> assertThat(b.loggingEnabled()).isTrue());
        assertThat(builders).allSatisfy(b -> assertThat(b.build().persistent()).isTrue());
        assertThat(TimerStore.storeBuilders(COMPUTATION, false)).allSatisfy(b -> assertThat(b.build().persistent()).isFalse());
    }

    @Test
    void shouldChangelogEveryTimerAndHoldWriteButNoneOfAnAbortedCall() {
        in.pipeInput("add a 10 5");
        assertThat(timersChangelog.readRecordsToList()).as("the end mark's two rows, then the timer")
                .extracting(r -> r.key().length).containsExactly(2, 3, 2 + 8 + 12 + 2);
        assertThat(holdsChangelog.readRecordsToList()).extracting(r -> r.key().length)
                .containsExactly(2, 3, 2 + 8 + 8 + 12 + 2);
        in.pipeInput("add b 20 7");
        assertThat(timersChangelog.readRecordsToList()).singleElement().satisfies(r -> assertThat(r.value()).isNotNull());
        assertThat(holdsChangelog.readRecordsToList()).hasSize(1);

        in.pipeInput("fail c 5");
        assertThat(timersChangelog.isEmpty()).as("an aborted call writes nothing").isTrue();
        assertThat(holdsChangelog.isEmpty()).isTrue();

        in.pipeInput("fire 15");
        assertThat(fired.readValuesToList()).containsExactly("a@10");
        assertThat(timersChangelog.readRecordsToList()).as("the fired timer is deleted").singleElement()
                .satisfies(r -> assertThat(r.value()).isNull());
        assertThat(holdsChangelog.readRecordsToList()).singleElement().satisfies(r -> assertThat(r.value()).isNull());
    }

    /**
     * Behind the write-back cache (the compiled topology's stores) a timer added and fired within one
     * commit interval (here: one input record, after which TopologyTestDriver commits) leaves no row in
     * RocksDB and no record in either changelog; one that lives across a commit is written and deleted as
     * without the cache.
     */
    @Test
    void shouldChangelogNothingForATimerAddedAndFiredBetweenTwoCommits() {
        start(true);
        in.pipeInput("add a 10 5;fire 15");
        assertThat(fired.readValuesToList()).containsExactly("a@10");
        assertThat(timersChangelog.readRecordsToList()).as("only the end mark's two rows")
                .extracting(r -> r.key().length).containsExactly(2, 3);
        assertThat(holdsChangelog.readRecordsToList()).extracting(r -> r.key().length).containsExactly(2, 3);

        in.pipeInput("add b 20 7");
        assertThat(timersChangelog.readRecordsToList()).singleElement().satisfies(r -> assertThat(r.value()).isNotNull());
        assertThat(holdsChangelog.readRecordsToList()).hasSize(1);
        in.pipeInput("add c 30 8;fire 25");
        assertThat(fired.readValuesToList()).containsExactly("b@20");
        assertThat(timersChangelog.readRecordsToList()).as("b's tombstone and c's row")
                .extracting(r -> r.value() == null ? "-" : "+").containsExactlyInAnyOrder("-", "+");
        assertThat(holdsChangelog.readRecordsToList()).hasSize(2);
    }

    @Test
    void shouldRestoreTheSameTimersFromTheChangelogsOfCachedStores() {
        start(true);
        shouldRestoreTheSameTimersFromTheChangelogs();
    }

    @Test
    void shouldRestoreTheSameTimersFromTheChangelogs() {
        for (int i = 0; i < 40; i++) {
            in.pipeInput("add k" + (i % 7) + " " + (i * 37 % 100) + " " + (i * 37 % 100 - i));
        }
        in.pipeInput("add k1 3 -500"); // replaces nothing: a new trigger
        in.pipeInput("add k0 0 -600"); // dedup: replaces k0@0 with a smaller event time
        in.pipeInput("fire 30");
        List<String> firedFirst = fired.readValuesToList();
        assertThat(firedFirst).isNotEmpty();

        KeyValueStore<Bytes, byte[]> live = driver.getKeyValueStore(TimerStore.timersStoreName(COMPUTATION));
        KeyValueStore<Bytes, byte[]> liveHolds = driver.getKeyValueStore(TimerStore.holdsStoreName(COMPUTATION));
        TimerStore original = new TimerStore(live, liveHolds, List.of("s"), new boolean[] {true});

        try (TimerTestStores restored = TimerTestStores.inMemory(new File(stateDir, "restored"))) {
            replay(timersChangelog.readRecordsToList(), restored.timers);
            replay(holdsChangelog.readRecordsToList(), restored.holds);
            TimerStore fromChangelog = new TimerStore(restored.timers, restored.holds, List.of("s"), new boolean[] {true});
            assertThat(fromChangelog.minPendingEventTimestamp()).isEqualTo(original.minPendingEventTimestamp());
            assertThat(fromChangelog.due(0, 1_000, 1_000)).isEqualTo(original.due(0, 1_000, 1_000)).isNotEmpty();
            assertThat(AbstractTimerStoreTest.rows(restored.holds)).isEqualTo(AbstractTimerStoreTest.rows(liveHolds));
        }
    }

    private static void replay(List<TestRecord<byte[], byte[]>> changelog, KeyValueStore<Bytes, byte[]> store) {
        List<String> seen = new ArrayList<>();
        for (TestRecord<byte[], byte[]> r : changelog) {
            store.put(Bytes.wrap(r.key()), r.value());
            seen.add(r.value() == null ? "-" : "+");
        }
        assertThat(seen).isNotEmpty();
    }
}
