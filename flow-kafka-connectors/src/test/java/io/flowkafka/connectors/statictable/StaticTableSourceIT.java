package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The static-table source on a real broker (reference 002: "Source: exactly-once — deduplication by read ranges"):
 * three tables of 3000 rows read by two tasks on two instances in child JVMs; instance a is killed (SIGKILL)
 * mid-read and a fresh instance takes its place, restoring the read progress from the changelog. Every row goes to
 * a sink topic in its call's transaction, read read_committed: every row of every table exactly once, each read by
 * the task owning its range.
 */
@WithKafka
class StaticTableSourceIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final List<String> TABLES = List.of("2026-01-01", "2026-01-02", "2026-01-03");
    private static final int ROWS = 3000;

    @Test
    @Timeout(600)
    void shouldReadASequenceOfTablesExactlyOnceThroughAKill(KafkaCluster cluster, TestNames names) throws Exception {
        String pipeline = names.name("statictable");
        String output = names.topic("read");
        Path tables = Files.createTempDirectory(tempRoot, "tables");
        Path state = Files.createTempDirectory(tempRoot, "state");
        LocalTablesDirectory dir = LocalTablesDirectory.open(tables);
        try (ReadLog log = new ReadLog(cluster, output)) {
            ChildJvm a = instance(cluster, pipeline, tables, output, state.resolve("a"));
            ChildJvm b = instance(cluster, pipeline, tables, output, state.resolve("b"));
            List<ChildJvm> running = new ArrayList<>(List.of(a, b));
            try {
                log.start();
                // published once both instances run: a reads at a bounded rate from here, so the kill lands mid-read
                for (String t : TABLES) {
                    publish(dir, t, ROWS);
                }
                Await.until(Duration.ofMinutes(3), "some rows read", () -> log.distinct() >= 1500);
                assertThat(log.distinct()).as("killed mid-read").isLessThan(TABLES.size() * ROWS);
                a.kill();
                running.add(instance(cluster, pipeline, tables, output, state.resolve("a2")));
                Await.until(Duration.ofMinutes(4), "every row of every table read",
                        () -> log.distinct() == TABLES.size() * ROWS);
            } finally {
                for (ChildJvm j : running) {
                    j.close();
                }
            }
            log.drain();
            for (Map.Entry<String, Integer> e : log.counts().entrySet()) {
                assertThat(e.getValue()).as("row %s read once", e.getKey()).isEqualTo(1);
            }
            assertThat(log.counts()).hasSize(TABLES.size() * ROWS);
            assertThat(log.misplaced()).as("rows read by a task not owning their range").isZero();
        }
    }

    /**
     * {@code read_mode: newest} (reference 001: "A new table appearing in the directory automatically triggers a new
     * run"): of three tables published before the start only the newest is read, through a kill mid-read; a newer
     * table published later is read as a new run; each of their rows once, no row of the older tables. Read at 100
     * rows/s per task, so that the second instance runs well before the newest table is read.
     */
    @Test
    @Timeout(600)
    void shouldReadOnlyTheNewestTablesExactlyOnceThroughAKill(KafkaCluster cluster, TestNames names) throws Exception {
        String pipeline = names.name("newest");
        String output = names.topic("read");
        Path tables = Files.createTempDirectory(tempRoot, "tables");
        Path state = Files.createTempDirectory(tempRoot, "state");
        LocalTablesDirectory dir = LocalTablesDirectory.open(tables);
        int rows = 2_000;
        for (String t : TABLES) {
            publish(dir, t, rows);
        }
        try (ReadLog log = new ReadLog(cluster, output)) {
            List<ChildJvm> running = new ArrayList<>();
            try {
                log.start();
                // both start at once: neither reads the table alone for the other's start-up
                ChildJvm a = builder(cluster, pipeline, tables, output, state.resolve("a"), "newest").start();
                running.add(a);
                ChildJvm b = builder(cluster, pipeline, tables, output, state.resolve("b"), "newest").start();
                running.add(b);
                a.awaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
                b.awaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
                Await.until(Duration.ofMinutes(3), "some rows read", () -> log.distinct() >= 500);
                assertThat(log.distinct()).as("killed mid-read").isLessThan(rows);
                a.kill();
                running.add(instance(cluster, pipeline, tables, output, state.resolve("a2"), "newest"));
                Await.until(Duration.ofMinutes(4), "every row of the newest table read", () -> log.distinct() == rows);
                publish(dir, "2026-01-04", rows);
                Await.until(Duration.ofMinutes(4), "every row of the newer table read",
                        () -> log.distinct() == 2 * rows);
            } finally {
                for (ChildJvm j : running) {
                    j.close();
                }
            }
            log.drain();
            assertThat(log.counts().keySet()).as("tables read")
                    .allMatch(k -> k.startsWith("2026-01-03/") || k.startsWith("2026-01-04/"));
            assertThat(log.counts()).hasSize(2 * rows);
            for (Map.Entry<String, Integer> e : log.counts().entrySet()) {
                assertThat(e.getValue()).as("row %s read once", e.getKey()).isEqualTo(1);
            }
        }
    }

    private static void publish(LocalTablesDirectory dir, String table, int rows) throws IOException {
        try (StaticTableWriter w = StaticTableWriter.builder(dir, table, StaticTableSourcePipeline.ROW)
                .rowsPerPart(1000).rowsPerSyncMark(100).open()) {
            for (long i = 0; i < rows; i++) {
                GenericRecord r = new GenericData.Record(StaticTableSourcePipeline.ROW);
                r.put("id", i);
                r.put("table", table);
                w.append(r);
            }
            w.publish();
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, Path tables, String output, Path state)
            throws Exception {
        return instance(cluster, pipeline, tables, output, state, "sequence");
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, Path tables, String output, Path state,
            String readMode) {
        return builder(cluster, pipeline, tables, output, state, readMode)
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    private static ChildJvm.Builder builder(KafkaCluster cluster, String pipeline, Path tables, String output,
            Path state, String readMode) {
        return ChildJvm.builder(StaticTableSourceMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, tables.toString(), output, state.toString(), readMode,
                        readMode.equals("newest") ? "100" : "300");
    }

    /** The sink topic read read_committed: how often each (table, id) came. */
    private static final class ReadLog implements AutoCloseable {
        private final KafkaCluster cluster;
        private final String topic;
        private final ObjectMapper json = new ObjectMapper();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Map<String, Integer> counts = new ConcurrentHashMap<>();
        private final java.util.concurrent.atomic.AtomicInteger misplaced = new java.util.concurrent.atomic.AtomicInteger();
        private volatile long lastRecordMs = System.currentTimeMillis();
        private volatile RuntimeException failure;
        private Thread thread;

        ReadLog(KafkaCluster cluster, String topic) {
            this.cluster = cluster;
            this.topic = topic;
        }

        void start() {
            thread = new Thread(this::run, "read-log");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try (KafkaConsumer<byte[], byte[]> c = cluster.committedConsumer(topic)) {
                while (!stop.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        JsonNode n = json.readTree(r.value());
                        long id = n.get("id").asLong();
                        counts.merge(n.get("table").asText() + "/" + id, 1, Integer::sum);
                        if (id / StaticTableSourcePipeline.RANGE % 2 != n.get("partition").asInt()) {
                            misplaced.incrementAndGet();
                        }
                        lastRecordMs = System.currentTimeMillis();
                    }
                }
            } catch (Exception e) {
                failure = new IllegalStateException("the read log failed", e);
            }
        }

        int distinct() {
            if (failure != null) {
                throw failure;
            }
            return counts.size();
        }

        Map<String, Integer> counts() {
            return Map.copyOf(counts);
        }

        int misplaced() {
            return misplaced.get();
        }

        /** Reads on until nothing came for 5 s (the instances are stopped). */
        void drain() {
            Await.until(Duration.ofMinutes(1), "the sink topic read to its end",
                    () -> System.currentTimeMillis() - lastRecordMs > 5_000);
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            if (thread != null) {
                thread.join(10_000);
            }
        }
    }
}
