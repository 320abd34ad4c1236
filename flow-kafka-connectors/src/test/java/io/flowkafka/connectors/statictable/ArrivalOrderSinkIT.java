package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TArrivalOrderTableSink} on a real broker with instances killed mid-stream. Reference 001: "The table and the
 * progress are committed in a single master transaction ... All partitions share one table sequence, and the
 * frontier is used for deduplication during replay". Two instances; each is killed with SIGKILL in turn while the
 * other (or its replacement) writes, and more input arrives between the kills; in the end every input message is in
 * exactly one table, and the table timestamps form one sequence with a fixed table_period step, without a gap or a
 * duplicate, which the directory's progress continues.
 */
@WithKafka
class ArrivalOrderSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long SEED = Long.getLong("flow.it.seed", 20261203L);

    @Test
    @Timeout(600)
    void shouldWriteEveryMessageToExactlyOneTableOfAGapFreeSequenceWhenAnInstanceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        int records = 20_000;
        String pipeline = names.name("aot");
        String input = names.topic("input");
        Path state = Files.createTempDirectory(tempRoot, "aot");
        Path output = state.resolve("tables");
        cluster.createTopic(input, 4);
        int firstHalf = 12_000;
        produce(cluster, input, 0, firstHalf);
        Random random = new Random(SEED);
        long killA = 2_000 + random.nextInt(8_000);
        try (ChildJvm a = instance(cluster, pipeline, input, output, state, "a");
                ChildJvm b = instance(cluster, pipeline, input, output, state, "b")) {
            Await.until(Duration.ofMinutes(3), killA + " rows in published tables", () -> rowsIn(output) >= killA);
            a.kill(); // SIGKILL, mid-stream: staged files, a half-written table, an unreplaced attribute may be left
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = instance(cluster, pipeline, input, output, state, "a2")) {
                produce(cluster, input, firstHalf, records - firstHalf);
                long killB = firstHalf + random.nextInt(records - firstHalf - 1_000);
                Await.until(Duration.ofMinutes(3), killB + " rows in published tables", () -> rowsIn(output) >= killB);
                b.kill(); // the second instance too, while the restarted one writes
                try (ChildJvm b2 = instance(cluster, pipeline, input, output, state, "b2")) {
                    Await.until(Duration.ofMinutes(4), records + " rows in published tables",
                            () -> rowsIn(output) >= records);
                    check(output, records);
                }
            }
        }
    }

    private static void check(Path output, int records) throws Exception {
        Map<String, Integer> seen = new HashMap<>();
        TreeMap<Instant, Integer> tables = new TreeMap<>();
        LocalTablesDirectory dir = LocalTablesDirectory.open(output);
        // the progress first: once the input idles, its watermark passes and empty tables follow meanwhile
        var progress = dir.directoryAttributes().get("progress");
        for (String t : dir.tableNames()) {
            TableAttributes attributes = dir.attributes(t);
            assertThat(tables.put(attributes.tableTimestamp(), 0)).as("one table per timestamp").isNull();
            for (GenericRecord r : StaticTableReader.open(dir, t).readAll()) {
                seen.merge(r.get("id").toString(), 1, Integer::sum);
            }
        }
        assertThat(seen).as("every input message in a table").hasSize(records);
        assertThat(seen.values()).as("each in exactly one table, once").containsOnly(1);
        List<Instant> ts = new ArrayList<>(tables.keySet());
        for (int i = 1; i < ts.size(); i++) {
            assertThat(Duration.between(ts.get(i - 1), ts.get(i))).as("no gap after " + ts.get(i - 1))
                    .isEqualTo(Duration.ofSeconds(1));
        }
        // the progress continues the sequence right after a table (the newest when it was read)
        assertThat(tables).containsKey(Instant.parse(progress.get("next_table_timestamp").asText()).minusSeconds(1));
        assertThat(progress.get("owner").get("sink").asText()).isEqualTo("tables");
        // at most one frontier (system_timestamp, message_id) per outbox partition, with the message's real system
        // time (those the input system watermark passed are dropped)
        assertThat(progress.get("frontiers").size()).isBetween(0, 4);
        progress.get("frontiers").forEach(f -> assertThat(f.get("system_timestamp").asLong())
                .isGreaterThan(Instant.now().minus(Duration.ofHours(1)).toEpochMilli() * 1_000_000L));
    }

    static long rowsIn(Path output) {
        try {
            LocalTablesDirectory dir = LocalTablesDirectory.open(output);
            long n = 0;
            for (String t : dir.tableNames()) {
                try {
                    n += dir.attributes(t).rowCount();
                } catch (java.nio.file.NoSuchFileException e) {
                    // expired meanwhile (not with a 1 h ttl)
                }
            }
            return n;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, Path output, Path state,
            String name, String... more) {
        List<String> args = new ArrayList<>(List.of(cluster.bootstrapServers(), pipeline, input, output.toString(),
                state.resolve(name).toString()));
        args.addAll(List.of(more));
        return ChildJvm.builder(ArrivalOrderSinkMain.class)
                .args(args.toArray(String[]::new))
                .maxHeap("384m")
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }

    static void produce(KafkaCluster cluster, String topic, int from, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = from; i < from + count; i++) {
                String user = "u" + (i % 97);
                sent.add(producer.send(new ProducerRecord<>(topic, user,
                        "{\"id\":\"e" + i + "\",\"user\":\"" + user + "\"}")));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }
}
