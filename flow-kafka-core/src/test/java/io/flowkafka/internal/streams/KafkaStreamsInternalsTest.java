package io.flowkafka.internal.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the Kafka Streams behaviour, internal and without a compatibility promise, that the classes of this
 * package rely on (their class comments say what): each test fails if a Kafka Streams upgrade changes it.
 * They run a small topology on TopologyTestDriver under exactly-once, whose commit is the one of a stream
 * thread: {@code StreamTask.prepareCommit}, then the producer's transaction commit, then
 * {@code StreamTask.postCommit}.
 *
 * <p><b>When a test here fails after a Kafka Streams upgrade</b>, see {@link #RECHECK}; the broker tests
 * {@code SyncSinkBarrierIT} (flow-kafka-connectors) and the wait-click benchmark cover the same ground on a
 * real stream thread.
 */
class KafkaStreamsInternalsTest {
    /** The Kafka Streams version the behaviour pinned here was last checked against. */
    static final String KAFKA_STREAMS_VERSION = "4.4.0";

    /** What to re-check when a test here fails. */
    static final String RECHECK = "Kafka Streams internals that io.flowkafka.internal.streams relies on changed "
            + "(pinned for Kafka Streams " + KAFKA_STREAMS_VERSION + "). Re-check, in the new version's sources: "
            + "(1) PreCommitStore / EpochBarrierStore: StreamTask.prepareCommit -> StreamTask.flush -> "
            + "ProcessorStateManager.flushCache() still calls flushCache() of every registered CachedStateStore before "
            + "the offsets and transaction commit, and an exception from it still fails the commit; StateStore.commit "
            + "still runs only after it (postCommit, checkpoint). If not, find another pre-commit hook or the "
            + "synchronous sinks' epoch barrier and at-most-once release break silently (SyncSinkBarrierIT). "
            + "(2) WriteBackStore: the same flushCache call writes its dirty rows to the changelog inside the "
            + "transaction (else rows are lost or land in the next transaction); ProcessorContext.getStateStore "
            + "still returns the store inside WrappedStateStores (else find() returns null: no cache metrics, and "
            + "TimerStore loses putNew); the StateStoreContext given to init is still an InternalProcessorContext "
            + "whose recordContext/setRecordContext let it lend a record context to writes made without one (the "
            + "change-logging store below stamps the changelog record with its timestamp); not tested here: "
            + "ProcessorStateManager.recycle() still calls clearCache(). The classes' comments say the same. "
            + "(3) io.flowkafka.internal.external.TableStore: a global store added with a processor is restored by "
            + "reprocessing its topic through that processor (GlobalStateManagerImpl.reprocessState), not by copying "
            + "raw records; else a versioned or filtered table restores wrong rows; the global consumer reads "
            + "read_committed under exactly_once_v2 (else aborted manager writes become visible to joiners). "
            + "Then update KAFKA_STREAMS_VERSION.";

    private static final String APP = "internals-app";

    @TempDir
    File stateDir;

    private TopologyTestDriver driver;

    @BeforeEach
    void reset() {
        Rows.reset();
    }

    @AfterEach
    void stop() {
        if (driver != null) {
            driver.close();
        }
    }

    @Test
    void theBehaviourPinnedHereWasCheckedAgainstTheKafkaStreamsInUse() throws IOException {
        Properties version = new Properties();
        try (InputStream in = KafkaStreams.class.getResourceAsStream("/kafka/kafka-streams-version.properties")) {
            assertThat(in).as("Kafka Streams' version resource").isNotNull();
            version.load(in);
        }
        assertThat(version.getProperty("version"))
                .as("Kafka Streams was upgraded: run this class's tests, re-check what they cannot see, then set "
                        + "KAFKA_STREAMS_VERSION. " + RECHECK)
                .isEqualTo(KAFKA_STREAMS_VERSION);
    }

    // ---------------------------------------------------------------- TableStore (external tables)

    @Test
    void aGlobalStoreWithAProcessorIsRestoredThroughItsProcessor() throws ReflectiveOperationException {
        // GlobalStateManagerImpl.restoreState calls reprocessState when the store has a reprocess factory, which
        // Topology.addGlobalStore(..., ProcessorSupplier) always gives: restored rows pass through TableStore's copier
        Class<?> manager = Class.forName("org.apache.kafka.streams.processor.internals.GlobalStateManagerImpl");
        Class<?> metadata = Class.forName(
                "org.apache.kafka.streams.processor.internals.GlobalStateManagerImpl$StateStoreMetadata");
        assertThat(manager.getDeclaredMethod("reprocessState", metadata)).as(RECHECK).isNotNull();
        Class<?> node = Class.forName("org.apache.kafka.streams.processor.internals.InternalTopologyBuilder");
        assertThat(java.util.Arrays.stream(node.getDeclaredMethods()).map(java.lang.reflect.Method::getName))
                .as(RECHECK).contains("addGlobalStore");
        Topology topology = new Topology();
        io.flowkafka.internal.external.TableStore.addTo(topology, "pinned-table", false);
        assertThat(topology.describe().globalStores()).singleElement()
                .satisfies(g -> assertThat(g.processor().name()).isEqualTo("external.copy.pinned-table"));
    }

    @Test
    void theGlobalConsumerReadsCommittedUnderExactlyOnce() {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        assertThat(new StreamsConfig(p).getGlobalConsumerConfigs("c").get("isolation.level"))
                .as(RECHECK).isEqualTo("read_committed");
    }

    // ---------------------------------------------------------------- PreCommitStore (EpochBarrierStore)

    @Test
    void aPreCommitStoresHookRunsInThePreCommitBeforeTheTransactionCommits() {
        Probe probe = new Probe();
        TestInputTopic<String, String> in = start(probe, null);
        TestOutputTopic<String, String> out = driver.createOutputTopic("out", new StringDeserializer(),
                new StringDeserializer());

        in.pipeInput("k", "v1");
        in.pipeInput("k", "v2");

        assertThat(probe.hookStacks).as(RECHECK).hasSize(2);
        for (List<String> stack : probe.hookStacks) {
            assertThat(stack).as(RECHECK).containsSubsequence(
                    PreCommitStore.class.getName() + ".flushCache",
                    "org.apache.kafka.streams.processor.internals.ProcessorStateManager.flushCache",
                    "org.apache.kafka.streams.processor.internals.StreamTask.flush",
                    "org.apache.kafka.streams.processor.internals.StreamTask.prepareCommit");
            assertThat(stack).as(RECHECK).doesNotContain("org.apache.kafka.streams.processor.internals.StreamTask.postCommit");
        }
        // StateStore.commit is the checkpoint, after the transaction: no hook
        for (List<String> stack : probe.commitStacks) {
            assertThat(stack).as(RECHECK).contains("org.apache.kafka.streams.processor.internals.StreamTask.postCommit")
                    .doesNotContain("org.apache.kafka.streams.processor.internals.StreamTask.prepareCommit");
        }
        assertThat(probe.events).as(RECHECK).containsExactly("beforeTaskCommit", "commit", "beforeTaskCommit", "commit");
        assertThat(out.readValuesToList()).containsExactly("v1", "v2");
    }

    @Test
    void anExceptionFromThePreCommitHookFailsTheCommit() {
        Probe probe = new Probe();
        TestInputTopic<String, String> in = start(probe, null);
        TestOutputTopic<String, String> out = driver.createOutputTopic("out", new StringDeserializer(),
                new StringDeserializer());
        StreamsException failure = new StreamsException("a sink did not acknowledge");
        probe.failNext = failure;

        assertThatThrownBy(() -> in.pipeInput("k", "lost")).as(RECHECK)
                .satisfies(e -> assertThat(causes(e)).as(RECHECK).contains(failure));
        assertThat(out.isEmpty()).as(RECHECK + " (the failed epoch's output must not be committed)").isTrue();
    }

    // ---------------------------------------------------------------- WriteBackStore

    @Test
    void aWriteBackStoreWritesItsRowsToTheChangelogInTheTransactionOfTheirCommit() {
        Probe probe = new Probe();
        TestInputTopic<String, String> in = start(probe, WriteBackStore.builder(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("rows"), Serdes.Bytes(), Serdes.ByteArray()),
                new WriteBackStore.Budget(1 << 20), false));
        TestOutputTopic<String, String> changelog = driver.createOutputTopic(APP + "-rows-changelog",
                new StringDeserializer(), new StringDeserializer());

        assertThat(Rows.found).as("WriteBackStore.find through what ProcessorContext.getStateStore returns. " + RECHECK)
                .isNotNull();
        assertThat(probe.initContext).as("the StateStoreContext of init. " + RECHECK)
                .isInstanceOf(InternalProcessorContext.class);
        in.pipeInput("a", "1");
        assertThat(Rows.writtenWhileProcessing).as("cached until the flush").isZero();
        // the TopologyTestDriver shows a transaction's records once it committed: the row is in this input's one
        assertThat(changelog.readKeyValuesToMap()).as(RECHECK).isEqualTo(Map.of("a", "1"));
        assertThat(Rows.found.writeCounts()[0]).isEqualTo(1);
    }

    @Test
    void aWriteBackStoreLendsARecordContextToItsWritesWhenThereIsNone() {
        Probe probe = new Probe();
        TestInputTopic<String, String> in = start(probe, WriteBackStore.builder(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("rows"), Serdes.Bytes(), Serdes.ByteArray()),
                new WriteBackStore.Budget(0), false)); // no cache: each write goes through at once
        TestOutputTopic<String, String> changelog = driver.createOutputTopic(APP + "-rows-changelog",
                new StringDeserializer(), new StringDeserializer());

        Rows.withoutRecordContext = true;
        in.pipeInput("a", "1");
        assertThat(Rows.recordContextAfterWrite).as("the lent record context is taken back").isNull();
        assertThat(changelog.readKeyValuesToMap()).as(RECHECK).isEqualTo(Map.of("a", "1"));
    }

    // ---------------------------------------------------------------- topology

    /**
     * Source {@code in} -> processor {@code p} (forwards each value to {@code out}; with {@code rows}, writes
     * each record to it) with the {@code probe} store attached.
     */
    private TestInputTopic<String, String> start(Probe probe, StoreBuilder<KeyValueStore<Bytes, byte[]>> rows) {
        Topology topology = new Topology();
        topology.addSource("in", new StringDeserializer(), new StringDeserializer(), "in");
        topology.addProcessor("p", () -> new Rows(rows != null), "in");
        topology.addStateStore(probe.builder(), "p");
        if (rows != null) {
            topology.addStateStore(rows, "p");
        }
        topology.addSink("out", "out", new StringSerializer(), new StringSerializer(), "p");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.getPath());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        driver = new TopologyTestDriver(topology, props);
        return driver.createInputTopic("in", new StringSerializer(), new StringSerializer());
    }

    /** The processor: forwards each value; with the {@code rows} store, writes each record to it. */
    static final class Rows implements Processor<String, String, String, String> {
        static WriteBackStore found;
        static boolean withoutRecordContext;
        static Object recordContextAfterWrite = "not written";
        static long writtenWhileProcessing = -1;

        private final boolean withRows;
        private ProcessorContext<String, String> context;
        private KeyValueStore<Bytes, byte[]> rows;

        Rows(boolean withRows) {
            this.withRows = withRows;
        }

        static void reset() {
            found = null;
            withoutRecordContext = false;
            recordContextAfterWrite = "not written";
            writtenWhileProcessing = -1;
        }

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
            if (withRows) {
                rows = context.getStateStore("rows");
                found = WriteBackStore.find(rows);
            }
        }

        @Override
        public void process(Record<String, String> record) {
            if (withRows) {
                if (withoutRecordContext) {
                    // as at a flush outside of processing, when the task may have no current record
                    InternalProcessorContext<?, ?> internal = (InternalProcessorContext<?, ?>) context;
                    ProcessorRecordContext current = internal.recordContext();
                    internal.setRecordContext(null);
                    rows.put(Bytes.wrap(record.key().getBytes()), record.value().getBytes());
                    recordContextAfterWrite = internal.recordContext();
                    internal.setRecordContext(current);
                } else {
                    rows.put(Bytes.wrap(record.key().getBytes()), record.value().getBytes());
                    writtenWhileProcessing = found.writeCounts()[0];
                }
            }
            context.forward(record);
        }
    }

    /** A {@link PreCommitStore} that records how Kafka Streams calls it. */
    static final class Probe extends PreCommitStore {
        final List<String> events = new ArrayList<>();
        final List<List<String>> hookStacks = new ArrayList<>();
        final List<List<String>> commitStacks = new ArrayList<>();
        StateStoreContext initContext;
        RuntimeException failNext;
        private boolean open;

        @Override
        protected void beforeTaskCommit() {
            events.add("beforeTaskCommit");
            hookStacks.add(stack());
            RuntimeException failure = failNext;
            if (failure != null) {
                failNext = null;
                throw failure;
            }
        }

        @Override
        public void commit(Map<TopicPartition, Long> changelogOffsets) {
            events.add("commit");
            commitStacks.add(stack());
        }

        @Override
        public String name() {
            return "probe";
        }

        @Override
        public void init(StateStoreContext context, StateStore root) {
            initContext = context;
            context.register(root, (key, value) -> { });
            open = true;
        }

        @Override
        public void close() {
            open = false;
        }

        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        StoreBuilder<Probe> builder() {
            Probe probe = this;
            return new StoreBuilder<>() {
                @Override
                public StoreBuilder<Probe> withCachingEnabled() {
                    return this;
                }

                @Override
                public StoreBuilder<Probe> withCachingDisabled() {
                    return this;
                }

                @Override
                public StoreBuilder<Probe> withLoggingEnabled(Map<String, String> config) {
                    return this;
                }

                @Override
                public StoreBuilder<Probe> withLoggingDisabled() {
                    return this;
                }

                @Override
                public Probe build() {
                    return probe;
                }

                @Override
                public Map<String, String> logConfig() {
                    return Map.of();
                }

                @Override
                public boolean loggingEnabled() {
                    return false;
                }

                @Override
                public String name() {
                    return probe.name();
                }
            };
        }

        /** The calling frames, innermost first, as {@code class.method}. */
        private static List<String> stack() {
            return StackWalker.getInstance().walk(s -> s.map(f -> f.getClassName() + "." + f.getMethodName()).toList());
        }
    }

    private static List<Throwable> causes(Throwable e) {
        List<Throwable> all = new ArrayList<>();
        for (Throwable t = e; t != null && !all.contains(t); t = t.getCause()) {
            all.add(t);
        }
        return all;
    }

    @Test
    void shouldEnforceTheRebalanceAfterATaskCorruptionWithTheReasonSourcePausingConsumerDrops() throws IOException {
        // SourcePausingConsumer drops the rebalance StreamThread enforces after reviving corrupted tasks (it closed
        // the revived tasks before they reset their offsets: records lost); it knows it by its reason
        String reason = "Active tasks corrupted";
        byte[] streamThread;
        try (InputStream in = KafkaStreams.class.getResourceAsStream(
                "/org/apache/kafka/streams/processor/internals/StreamThread.class")) {
            assertThat(in).as("StreamThread's class file").isNotNull();
            streamThread = in.readAllBytes();
        }
        assertThat(new String(streamThread, StandardCharsets.ISO_8859_1)).as("Kafka Streams "
                + KAFKA_STREAMS_VERSION + " re-check: StreamThread calls mainConsumer.enforceRebalance(\"" + reason
                + "\") after TaskManager.handleCorruption; if the reason changed, update "
                + "SourcePausingConsumer.ACTIVE_TASKS_CORRUPTED, or the revived tasks' replay is lost again "
                + "(CommitFaultExactlyOnceIT)").contains(reason);
    }
}
