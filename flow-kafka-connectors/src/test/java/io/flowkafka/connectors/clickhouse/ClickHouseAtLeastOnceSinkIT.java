package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TAtLeastOnceClickHouseSink} into a plain MergeTree (no block deduplication, so every duplicate stays
 * visible) on the real ClickHouse 18.16, with an instance killed mid-stream. Reference 002: "the epoch batch is
 * written synchronously during processing without intermediate storage and without a deduplication token ... A
 * failed write prevents the epoch from committing, so messages are not lost ... On failure after a successful write
 * but before epoch commit, the same batch is written again, so duplicates are possible." Two child-JVM instances; one
 * is killed with SIGKILL while rows arrive, a replacement starts, more input comes; in the end every id is in the
 * table (0 lost), and the duplicates are counted and reported.
 */
@WithKafka
class ClickHouseAtLeastOnceSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long SEED = Long.getLong("flow.it.seed", 20261226L);

    @Test
    @Timeout(300)
    void shouldLoseNoRowWhenAnInstanceIsKilledMidStream(KafkaCluster cluster, TestNames names) throws Exception {
        URI url = ClickHouseTestServer.url();
        String table = names.name("chalo").replaceAll("[^A-Za-z0-9_]", "_");
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ch.query("DROP TABLE IF EXISTS default." + table);
            ch.query("CREATE TABLE default." + table + " (message_id String, id String, user String, n Int64) "
                    + "ENGINE = MergeTree ORDER BY tuple()");
            int records = 10_000;
            int firstPart = 6_000;
            String pipeline = names.name("chalop");
            String input = names.topic("input");
            Path state = Files.createTempDirectory(tempRoot, "chalo");
            cluster.createTopic(input, 4);
            ClickHouseBatchingSinkIT.produce(cluster, input, 0, firstPart);
            long kill = 1_000 + new Random(SEED).nextInt(4_000);
            try (ChildJvm a = instance(cluster, pipeline, input, state, table, url, "a");
                    ChildJvm b = instance(cluster, pipeline, input, state, table, url, "b")) {
                Await.until(Duration.ofMinutes(2), kill + " rows in ClickHouse",
                        () -> ClickHouseBatchingSinkIT.count(ch, table) >= kill);
                a.kill(); // SIGKILL mid-stream: epochs written but not committed are replayed and written again
                assertThat(a.isAlive()).isFalse();
                try (ChildJvm a2 = instance(cluster, pipeline, input, state, table, url, "a2")) {
                    ClickHouseBatchingSinkIT.produce(cluster, input, firstPart, records - firstPart);
                    Await.until(Duration.ofMinutes(2), records + " distinct ids in ClickHouse",
                            () -> distinct(ch, table) >= records);
                    List<String> summary = ClickHouseTestServer.lines(ch, "SELECT uniqExact(id), count(), min(n), "
                            + "max(n) FROM default." + table);
                    String[] s = summary.get(0).split("\t");
                    long duplicates = Long.parseLong(s[1]) - Long.parseLong(s[0]);
                    System.out.println("TAtLeastOnceClickHouseSink after SIGKILL at " + kill + " rows: " + s[0]
                            + " ids of " + records + ", " + s[1] + " rows, " + duplicates + " duplicate(s), 0 lost");
                    assertThat(Long.parseLong(s[0])).as("every id at least once: nothing lost").isEqualTo(records);
                    assertThat(s[2] + "\t" + s[3]).isEqualTo("0\t" + (records - 1));
                    assertThat(duplicates).as("duplicates only of replayed epochs: fewer than the rows").isNotNegative()
                            .isLessThan(records);
                }
            }
        }
    }

    private static long distinct(ClickHouseHttpClient ch, String table) {
        try {
            return Long.parseLong(ch.query("SELECT uniqExact(id) FROM default." + table).strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, Path state, String table,
            URI url, String name) {
        return ChildJvm.builder(ClickHouseDirectSinkMain.class)
                .args(cluster.bootstrapServers(), pipeline, input, state.resolve(name).toString(), table,
                        url.toString(), ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE)
                .maxHeap("256m")
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }
}
