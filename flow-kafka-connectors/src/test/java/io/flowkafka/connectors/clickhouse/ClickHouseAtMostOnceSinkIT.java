package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TAtMostOnceClickHouseSink} on a real broker into the real ClickHouse 18.16. Reference 002: "With the default
 * static setting at_most_once_strategy.enabled = false, pending messages stay in output_messages and use ordered
 * delivery, so a connection or session failure before INSERT starts may be retried. Set the option to true to send
 * each message independently through a bounded in-memory queue without waiting for delivery. Its dynamic limit is
 * at_most_once_strategy.total_queue_bytes_limit; the sink logs a warning when it drops messages on overflow. In
 * either mode, once INSERT has started, a failed insert is acknowledged instead of retried. Each message generates a
 * separate INSERT".
 */
@WithKafka
class ClickHouseAtMostOnceSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    /** A table whose INSERT starts and fails, deterministically, for the rows with n % 10 = 3 (code 395). */
    private static final String FAILING_COLUMNS = "message_id String, id String, user String, n Int64, "
            + "chk UInt8 MATERIALIZED throwIf(n % 10 = 3)";
    private static final String COLUMNS = "message_id String, id String, user String, n Int64";
    private static final long SEED = Long.getLong("flow.it.seed", 20261205L);

    @Test
    @Timeout(180)
    void shouldAcknowledgeEveryInsertThatStartedAndFailedAndCountItAsDropped(KafkaCluster cluster, TestNames names)
            throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = table(names, "chamo_fail");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            create(ch, table, FAILING_COLUMNS);
            String input = names.topic("input");
            cluster.createTopic(input, 2);
            int records = 300;
            produce(cluster, input, 0, records);
            PipelineSpec spec = ClickHouseDirectSinkMain.spec(names.name("chamof"), input,
                    ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, table, url.toString(), Map.of());
            try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster, "amof"))) {
                runtime.start();
                Counter dropped = runtime.meterRegistry().get("flow.sink.dropped").tag("sink", "ch").counter();
                Await.until(Duration.ofMinutes(2), "every message inserted or dropped",
                        () -> count(ch, table) + (long) dropped.count() >= records);
                System.out.println("TAtMostOnceClickHouseSink outbox mode: " + records + " messages, "
                        + (long) dropped.count() + " failed INSERTs acknowledged and dropped, " + count(ch, table)
                        + " inserted");
                assertThat(dropped.count()).as("exactly the INSERTs that started and failed (n % 10 = 3)")
                        .isEqualTo(records / 10);
                assertThat(ClickHouseTestServer.lines(ch, "SELECT countIf(n % 10 = 3), uniqExact(id), count() FROM "
                        + "default." + table)).containsExactly("0\t" + (records - records / 10) + "\t"
                        + (records - records / 10));
            }
        }
    }

    @Test
    @Timeout(180)
    void shouldRetryWhileTheConnectionIsRefusedBeforeTheInsertStartsAndLoseNothing(KafkaCluster cluster,
            TestNames names) throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = table(names, "chamo_refused");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client(); GatedProxy proxy = new GatedProxy(url)) {
            create(ch, table, COLUMNS);
            String input = names.topic("input");
            cluster.createTopic(input, 2);
            int records = 200;
            produce(cluster, input, 0, records);
            PipelineSpec spec = ClickHouseDirectSinkMain.spec(names.name("chamor"), input,
                    ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, table, proxy.url().toString(), Map.of());
            try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster, "amor"))) {
                runtime.start();
                Await.until(Duration.ofMinutes(1), "the delivery failing with a refused connection",
                        () -> runtime.status().stream().anyMatch(s -> s.message().contains("Connect")));
                proxy.listen().open();
                Counter dropped = runtime.meterRegistry().get("flow.sink.dropped").tag("sink", "ch").counter();
                Await.until(Duration.ofMinutes(2), "every message inserted", () -> count(ch, table) >= records);
                assertThat(dropped.count()).as("no INSERT had started: nothing dropped").isZero();
                assertThat(ClickHouseTestServer.lines(ch, "SELECT uniqExact(id), count() FROM default." + table))
                        .containsExactly(records + "\t" + records);
            }
        }
    }

    @Test
    @Timeout(180)
    void shouldDropOnlyBeyondTheQueueBytesLimitWithTheStrategyEnabled(KafkaCluster cluster, TestNames names)
            throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = table(names, "chamo_queue");
        long limit = 10_000;
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client(); GatedProxy proxy = new GatedProxy(url).listen()) {
            create(ch, table, COLUMNS);
            String input = names.topic("input");
            cluster.createTopic(input, 2);
            int records = 1_000;
            produce(cluster, input, 0, records);
            PipelineSpec spec = ClickHouseDirectSinkMain.spec(names.name("chamoq"), input,
                    ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, table, proxy.url().toString(),
                    Map.of("at_most_once_strategy", Map.of("enabled", true, "total_queue_bytes_limit", limit)));
            try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster, "amoq"))) {
                runtime.start();
                Counter dropped = runtime.meterRegistry().get("flow.sink.dropped").tag("sink", "ch").counter();
                Gauge queuedBytes = runtime.meterRegistry().get("flow.sink.queue_bytes").tag("sink", "ch").gauge();
                Gauge queued = runtime.meterRegistry().get("flow.sink.queue_messages").tag("sink", "ch").gauge();
                // the proxy holds the session's first request: the queue fills up to its limit, the rest overflows
                Await.until(Duration.ofMinutes(1), "the input processed and the held queue full",
                        () -> committedInput(runtime, cluster, input) >= records
                                && queuedBytes.value() > limit - 64);
                assertThat(dropped.count()).as("1000 messages of ~35-40 bytes overflow 10000 bytes").isPositive();
                assertThat(queuedBytes.value()).as("drops only once the queue was within one message of its limit")
                        .isLessThanOrEqualTo(limit);
                long heldInQueue = (long) queued.value();
                proxy.open();
                Await.until(Duration.ofMinutes(2), "the queue delivered",
                        () -> count(ch, table) + (long) dropped.count() >= records);
                assertThat(count(ch, table) + (long) dropped.count()).as("each message inserted or dropped, once")
                        .isEqualTo(records);
                assertThat(count(ch, table)).as("every queued message, plus the batch the held delivery had taken")
                        .isGreaterThanOrEqualTo(heldInQueue);
                // a later burst well under the limit, with ClickHouse reachable: nothing dropped
                double droppedBefore = dropped.count();
                produce(cluster, input, records, 100);
                Await.until(Duration.ofMinutes(1), "the later burst inserted",
                        () -> count(ch, table) + (long) dropped.count() >= records + 100);
                assertThat(dropped.count()).as("no drop below the limit").isEqualTo(droppedBefore);
                System.out.println("TAtMostOnceClickHouseSink queue mode, limit " + limit + " bytes: " + records
                        + " messages while ClickHouse was held, " + (long) droppedBefore + " dropped, "
                        + (records - (long) droppedBefore) + " inserted; then 100 more, 0 dropped");
                assertThat(ClickHouseTestServer.lines(ch, "SELECT count() = uniqExact(id) FROM default." + table))
                        .as("each message at most once").containsExactly("1");
            }
        }
    }

    /**
     * Reference 002: "once INSERT has started, a failed insert is acknowledged instead of retried" — across a crash
     * too. The only instance is killed (SIGKILL) while it inserts; its replacement replays the outbox from the
     * committed offset but skips every message whose INSERT may have started (the started marker written before each
     * batch): no id is ever inserted twice; what the killed instance had taken but not inserted is lost, at most
     * one outbox batch (500 messages) per partition.
     */
    /**
     * "A failure that happens before an INSERT starts is retried" (clickhouse-sinks.md), also by the partition's next
     * owner: ClickHouse goes away after the writer session started, the instance stops during the outage, another
     * starts once ClickHouse is back. Every message must be inserted or counted as dropped; none skipped silently.
     */
    @Test
    @Timeout(240)
    void shouldRetryAfterARestartDuringAnOutageTheMessagesWhoseInsertNeverStarted(KafkaCluster cluster,
            TestNames names) throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = table(names, "chamo_outage");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client(); GatedProxy proxy = new GatedProxy(url)) {
            create(ch, table, COLUMNS);
            String input = names.topic("input");
            cluster.createTopic(input, 1);
            int first = 100;
            int records = 300;
            produce(cluster, input, 0, first);
            PipelineSpec spec = ClickHouseDirectSinkMain.spec(names.name("chamoo"), input,
                    ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, table, proxy.url().toString(), Map.of());
            Properties props = props(cluster, "amoo");
            proxy.listen().open();
            double droppedBefore;
            try (FlowRuntime a = FlowRuntime.create(spec, props)) {
                a.start();
                Await.until(Duration.ofMinutes(1), "the first messages inserted", () -> count(ch, table) >= first);
                proxy.refuse();
                produce(cluster, input, first, records - first);
                Await.until(Duration.ofMinutes(1), "the delivery failing with a refused connection",
                        () -> a.status().stream().anyMatch(s -> s.message().contains("did not reach ClickHouse")));
                droppedBefore = a.meterRegistry().get("flow.sink.dropped").tag("sink", "ch").counter().count();
            }
            proxy.listen();
            try (FlowRuntime b = FlowRuntime.create(spec, props)) {
                b.start();
                Counter dropped = b.meterRegistry().get("flow.sink.dropped").tag("sink", "ch").counter();
                Await.until(Duration.ofMinutes(1), "every message inserted or counted as dropped",
                        () -> count(ch, table) + (long) (droppedBefore + dropped.count()) >= records);
                assertThat(ClickHouseTestServer.lines(ch, "SELECT count() - uniqExact(id) FROM default." + table))
                        .as("no message inserted twice").containsExactly("0");
            }
        }
    }

    @Test
    @Timeout(300)
    void shouldNeverInsertAMessageTwiceWhenAnInstanceIsKilledMidStream(KafkaCluster cluster, TestNames names)
            throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = table(names, "chamo_kill");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            create(ch, table, COLUMNS);
            String pipeline = names.name("chamok");
            String input = names.topic("input");
            int partitions = 2;
            cluster.createTopic(input, partitions);
            int records = 2_400;
            int firstPart = 2_000;
            produce(cluster, input, 0, firstPart);
            Path state = Files.createTempDirectory(tempRoot, "chamok");
            long kill = 300 + new Random(SEED).nextInt(900);
            try (ChildJvm a = instance(cluster, pipeline, input, state, table, url, "a")) {
                Await.until(Duration.ofMinutes(2), kill + " rows in ClickHouse", () -> count(ch, table) >= kill);
                a.kill(); // SIGKILL while it inserts: the replacement replays from the committed outbox offsets
                assertThat(a.isAlive()).isFalse();
            }
            long atKill = count(ch, table);
            try (ChildJvm a2 = instance(cluster, pipeline, input, state, table, url, "a2")) {
                produce(cluster, input, firstPart, records - firstPart);
                // ordered delivery per partition: once every later id is in, the earlier ones were settled
                Await.until(Duration.ofMinutes(2), "every id produced after the kill in ClickHouse",
                        () -> count(ch, table + " WHERE n >= " + firstPart) >= records - firstPart);
            }
            String[] s = ClickHouseTestServer.lines(ch, "SELECT uniqExact(id), count() FROM default." + table).get(0)
                    .split("\t");
            long ids = Long.parseLong(s[0]);
            long rows = Long.parseLong(s[1]);
            System.out.println("TAtMostOnceClickHouseSink after SIGKILL at " + atKill + " rows: " + rows + " rows, "
                    + ids + " ids of " + records + ", " + (records - ids) + " lost, " + (rows - ids) + " duplicated");
            assertThat(rows).as("no id inserted twice: at most once across the kill").isEqualTo(ids);
            assertThat(ids).as("the replacement went on past the kill").isGreaterThan(atKill);
            assertThat(records - ids).as("lost: only what the killed instance had taken, one batch per partition")
                    .isBetween(0L, partitions * 500L);
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, Path state, String table,
            URI url, String name) {
        return ChildJvm.builder(ClickHouseDirectSinkMain.class)
                .args(cluster.bootstrapServers(), pipeline, input, state.resolve(name).toString(), table,
                        url.toString(), ClickHouseDirectSinkProvider.T_AT_MOST_ONCE)
                .maxHeap("256m")
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }

    private static String table(TestNames names, String prefix) {
        return names.name(prefix).replaceAll("[^A-Za-z0-9_]", "_");
    }

    private static void create(ClickHouseHttpClient ch, String table, String columns) throws IOException {
        ch.query("DROP TABLE IF EXISTS default." + table);
        ch.query("CREATE TABLE default." + table + " (" + columns + ") ENGINE = MergeTree ORDER BY tuple()");
    }

    private static Properties props(KafkaCluster cluster, String name) throws IOException {
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, name).toString());
        props.put("commit.interval.ms", "100");
        return props;
    }

    /** Produces in order, one request in flight: the test's own messages are not part of what it checks. */
    private static void produce(KafkaCluster cluster, String topic, int from, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = from; i < from + count; i++) {
                String user = "u" + (i % 97);
                sent.add(producer.send(new ProducerRecord<>(topic, user,
                        "{\"id\":\"e" + i + "\",\"user\":\"" + user + "\",\"n\":" + i + "}")));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get(1, TimeUnit.MINUTES);
            }
        }
    }

    private static long count(ClickHouseHttpClient ch, String table) {
        return ClickHouseBatchingSinkIT.count(ch, table);
    }

    private static long committedInput(FlowRuntime runtime, KafkaCluster cluster, String input) {
        try {
            return cluster.admin().listConsumerGroupOffsets(runtime.applicationId()).partitionsToOffsetAndMetadata()
                    .get().entrySet().stream().filter(e -> e.getKey().topic().equals(input))
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
