package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TClickHouseBatchingSink} into a ReplicatedMergeTree on the real ClickHouse 18.16 (no
 * {@code insert_deduplication_token}: block deduplication only) with instances killed mid-stream. Reference 002:
 * "messages are stored in output_messages and deterministically grouped into batches by the same MessageId
 * boundaries ... A byte-identical replay carries the same deduplication token ... ClickHouse deduplicates the repeat".
 * Two child-JVM instances; one is killed with SIGKILL while rows arrive, a replacement starts, more input comes; in
 * the end {@code SELECT id, count() ... GROUP BY id} has every id exactly once.
 */
@WithKafka
class ClickHouseBatchingSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long SEED = Long.getLong("flow.it.seed", 20261203L);

    @Test
    @Timeout(300)
    void shouldInsertEveryIdExactlyOnceIntoReplicatedMergeTreeWhenAnInstanceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = names.name("ch").replaceAll("[^A-Za-z0-9_]", "_");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ClickHouseTestServer.createReplicated(ch, table, "message_id String, id String, user String, n Int64");
            int records = 20_000;
            int firstHalf = 12_000;
            String pipeline = names.name("chp");
            String input = names.topic("input");
            Path state = Files.createTempDirectory(tempRoot, "ch");
            cluster.createTopic(input, 4);
            produce(cluster, input, 0, firstHalf);
            long kill = 2_000 + new Random(SEED).nextInt(6_000);
            try (ChildJvm a = instance(cluster, pipeline, input, state, table, url, "a");
                    ChildJvm b = instance(cluster, pipeline, input, state, table, url, "b")) {
                Await.until(Duration.ofMinutes(2), kill + " rows in ClickHouse", () -> count(ch, table) >= kill);
                a.kill(); // SIGKILL mid-stream: inserted batches whose outbox offsets were not committed get replayed
                assertThat(a.isAlive()).isFalse();
                try (ChildJvm a2 = instance(cluster, pipeline, input, state, table, url, "a2")) {
                    produce(cluster, input, firstHalf, records - firstHalf);
                    Await.until(Duration.ofMinutes(2), records + " rows in ClickHouse",
                            () -> count(ch, table) >= records);
                    List<String> dup = ClickHouseTestServer.lines(ch, "SELECT id, count() AS c FROM default." + table
                            + " GROUP BY id HAVING c != 1 LIMIT 10");
                    assertThat(dup).as("ids not exactly once").isEmpty();
                    assertThat(ClickHouseTestServer.lines(ch, "SELECT uniqExact(id), count(), min(n), max(n) FROM "
                            + "default." + table)).containsExactly(records + "\t" + records + "\t0\t" + (records - 1));
                }
            }
        }
    }

    static long count(ClickHouseHttpClient ch, String table) {
        try {
            return Long.parseLong(ch.query("SELECT count() FROM default." + table).strip());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, Path state, String table, URI url,
            String name, String... more) {
        List<String> args = new ArrayList<>(List.of(cluster.bootstrapServers(), pipeline, input,
                state.resolve(name).toString(), table, url.toString()));
        args.addAll(List.of(more));
        return ChildJvm.builder(ClickHouseSinkMain.class)
                .args(args.toArray(String[]::new))
                .maxHeap("256m")
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }

    static void produce(KafkaCluster cluster, String topic, int from, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = from; i < from + count; i++) {
                String user = "u" + (i % 97);
                sent.add(producer.send(new ProducerRecord<>(topic, user,
                        "{\"id\":\"e" + i + "\",\"user\":\"" + user + "\",\"n\":" + i + "}")));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }
}
