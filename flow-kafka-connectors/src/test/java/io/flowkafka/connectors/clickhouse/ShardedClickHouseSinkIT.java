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
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TShardedClickHouseBatchingSink} over two real ClickHouse servers (shards {@code s1}, {@code s2}, each a
 * ReplicatedMergeTree) with an instance killed right after an insert it had not committed
 * ({@link HoldingClickHouseTestSink}). Reference 002: "With shard_hosts, each shard receives that
 * batch token with a :<shard name> suffix ... ClickHouse deduplicates the repeat". Every id is in exactly one shard,
 * once; every user (the sharding_key) in one shard only.
 */
@WithKafka
class ShardedClickHouseSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(300)
    void shouldSplitEveryBatchOverTheShardsExactlyOnceWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names)
            throws Exception {
        URI s1 = ClickHouseTestServer.url();
        URI s2 = ClickHouseTestServer.url2();
        String table = names.name("chs").replaceAll("[^A-Za-z0-9_]", "_");
        try (ClickHouseHttpClient c1 = ClickHouseTestServer.client();
                ClickHouseHttpClient c2 = new ClickHouseHttpClient(s2, null, null, Duration.ofSeconds(30))) {
            String columns = "message_id String, id String, user String, n Int64";
            ClickHouseTestServer.createReplicated(c1, table, columns);
            ClickHouseTestServer.createReplicated(c2, table, columns);
            int records = 8_000;
            String pipeline = names.name("chsp");
            String input = names.topic("input");
            Path state = Files.createTempDirectory(tempRoot, "chs");
            cluster.createTopic(input, 4);
            ClickHouseBatchingSinkIT.produce(cluster, input, 0, 5_000);
            String hosts = "s1=" + s1 + ",s2=" + s2;
            long kill = 1_000 + new Random(20261203L).nextInt(3_000);
            long duplicatesBefore = ClickHouseBatchDelivererTest.duplicatedBlocks(c1)
                    + ClickHouseBatchDelivererTest.duplicatedBlocks(c2);
            try (ChildJvm a = ClickHouseBatchingSinkIT.instance(cluster, pipeline, input, state, table, s1, "a",
                    kill, hosts);
                    ChildJvm b = ClickHouseBatchingSinkIT.instance(cluster, pipeline, input, state, table, s1, "b",
                            -1, hosts)) {
                a.awaitOutputLine(l -> l.startsWith("HELD "), Duration.ofMinutes(2)); // inserted, not committed
                a.kill();
                assertThat(a.isAlive()).isFalse();
                try (ChildJvm a2 = ClickHouseBatchingSinkIT.instance(cluster, pipeline, input, state, table, s1,
                        "a2", -1, hosts)) {
                    ClickHouseBatchingSinkIT.produce(cluster, input, 5_000, records - 5_000);
                    Await.until(Duration.ofMinutes(2), records + " rows in the shards",
                            () -> ClickHouseBatchingSinkIT.count(c1, table)
                                    + ClickHouseBatchingSinkIT.count(c2, table) >= records);
                }
            }
            String perId = "SELECT id, count() FROM default." + table + " GROUP BY id";
            List<String> one = ClickHouseTestServer.lines(c1, perId);
            List<String> two = ClickHouseTestServer.lines(c2, perId);
            assertThat(one).as("both shards get rows").isNotEmpty();
            assertThat(two).as("both shards get rows").isNotEmpty();
            Set<String> ids = new HashSet<>();
            for (String line : concat(one, two)) {
                String[] f = line.split("\t");
                assertThat(f[1]).as("id " + f[0] + " once in its shard").isEqualTo("1");
                assertThat(ids.add(f[0])).as("id " + f[0] + " in one shard only").isTrue();
            }
            assertThat(ids).hasSize(records);
            assertThat(ClickHouseBatchDelivererTest.duplicatedBlocks(c1) + ClickHouseBatchDelivererTest
                    .duplicatedBlocks(c2)).as("the held batch's blocks were replayed and dropped")
                    .isGreaterThan(duplicatesBefore);
            Set<String> users1 = new HashSet<>(ClickHouseTestServer.lines(c1, "SELECT DISTINCT user FROM default."
                    + table));
            users1.retainAll(ClickHouseTestServer.lines(c2, "SELECT DISTINCT user FROM default." + table));
            assertThat(users1).as("each user (the sharding_key) in one shard").isEmpty();
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
