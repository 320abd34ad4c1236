package io.flowkafka.examples.reconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.FlowTestDriver;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TStaticTableKeyVisitorJoiner} on a real broker, four partitions, two instances in child JVMs (reference 000,
 * "Static table joiner": "The joiner reads the table sequentially, in the same key order as the state scan, and
 * passes the table row to ProcessVisit as a read-only state for the visit key. Table keys take part in the scan on an
 * equal footing with state keys: a visit arrives even for a key that isn't yet in the computation's own state").
 * A sorted ledger of {@value #TABLE_KEYS} accounts; {@value #BOTH} of them and {@value #STATE_ONLY} others are in
 * state. Every visit writes a record in its transaction, read read_committed. Instance a is killed (SIGKILL) mid-pass
 * and a fresh one with an empty state directory replaces it: its tasks resume their pass from the changelogged
 * cursor ("Worker restart | Coverage is preserved"). Per complete pass and partition every key is visited exactly
 * once, nothing missed, nothing twice, also in the passes the kill interrupted.
 */
@WithKafka
class StaticTableJoinerIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int PARTITIONS = 4;
    private static final int TABLE_KEYS = 4000;
    private static final int BOTH = 1000;
    private static final int STATE_ONLY = 1000;
    private static final long PERIOD_SECONDS = 5;

    @Test
    @Timeout(600)
    void shouldVisitEveryTableAndStateKeyOncePerPassThroughAKill(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("ledger");
        String accounts = names.topic("accounts");
        String visits = names.topic("visits");
        cluster.createTopic(accounts, PARTITIONS);
        Path tables = Files.createTempDirectory(tempRoot, "tables");
        Path state = Files.createTempDirectory(tempRoot, "state");
        writeLedger(tables, pipeline, accounts, visits);
        Set<String> stateKeys = new HashSet<>();
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < BOTH + STATE_ONLY; i++) {
                String account = i < BOTH ? "t" + i : "u" + i;
                stateKeys.add(account);
                producer.send(new ProducerRecord<>(accounts, account, "{\"account\":\"" + account
                        + "\",\"balance\":-1}"));
            }
        }
        long started = System.nanoTime();
        Map<Integer, Long> loaded;
        Map<Integer, Long> killedIn;
        try (VisitLog log = new VisitLog(cluster, visits)) {
            List<ChildJvm> running = new ArrayList<>();
            try {
                ChildJvm a = instance(cluster, pipeline, accounts, visits, tables, state.resolve("a"), "a");
                running.add(a);
                running.add(instance(cluster, pipeline, accounts, visits, tables, state.resolve("b"), "b"));
                Await.until(Duration.ofMinutes(3), "every state key visited with its state",
                        () -> log.inStateSeen().containsAll(stateKeys));
                loaded = log.maxPassByPartition();
                Await.until(Duration.ofMinutes(2), "two passes after the state was loaded",
                        () -> log.minPassAbove(loaded, 2));
                killedIn = log.maxPassByPartition();
                a.kill();
                assertThat(a.isAlive()).isFalse();
                running.add(instance(cluster, pipeline, accounts, visits, tables, state.resolve("a2"), "a2"));
                Await.until(Duration.ofMinutes(3), "three more passes in every partition",
                        () -> log.minPassAbove(killedIn, 3));
            } finally {
                for (ChildJvm j : running) {
                    j.close();
                }
            }
            log.drain(Duration.ofMinutes(1));

            Map<String, Integer> partitionOf = log.partitionOf;
            assertThat(partitionOf).as("every table key and every state key was visited")
                    .hasSize(TABLE_KEYS + STATE_ONLY);
            assertThat(log.moved).as("keys never change partition").isEmpty();
            assertThat(log.wrongRows).as("visits whose ledger row was not the table's, or not read-only").isEmpty();
            assertThat(log.stateMissing).as("state keys visited without their state after it was loaded")
                    .noneMatch(v -> v.pass() > loaded.get(v.partition()));
            int checked = 0;
            int resumed = 0;
            for (int part = 0; part < PARTITIONS; part++) {
                TreeSet<Long> passes = log.passes(part);
                assertThat(passes.last() - passes.first() + 1).as("pass numbers of partition %d continue", part)
                        .isEqualTo(passes.size());
                Set<String> mine = log.keysOf(part);
                for (long pass = passes.first(); pass < passes.last(); pass++) {
                    Map<String, Integer> counts = log.counts(part, pass);
                    assertThat(counts.values()).as("partition %d pass %d: no key visited twice", part, pass)
                            .allMatch(n -> n == 1);
                    if (pass <= loaded.get(part)) {
                        continue; // state keys were still arriving
                    }
                    assertThat(counts.keySet()).as("partition %d pass %d: every key visited", part, pass)
                            .isEqualTo(mine);
                    checked++;
                    Set<String> by = log.instances(part, pass);
                    if (pass >= killedIn.get(part) && by.contains("a") && by.size() > 1) {
                        resumed++; // in progress on a at the kill, finished by another instance
                    }
                }
            }
            assertThat(checked).as("complete passes checked in full").isGreaterThanOrEqualTo(3 * PARTITIONS);
            assertThat(resumed).as("passes the kill interrupted, resumed by another instance and checked in full")
                    .isGreaterThanOrEqualTo(1);
            System.out.printf("StaticTableJoinerIT: %d passes checked in full, %d resumed after the kill, %d visits, "
                    + "%d s%n", checked, resumed, log.visits, (System.nanoTime() - started) / 1_000_000_000L);
        }
    }

    /** Publishes the ledger: {@value #TABLE_KEYS} accounts t0.., balance 10 × i, sorted by the key. */
    private static void writeLedger(Path tables, String pipeline, String accounts, String visits) throws IOException {
        PipelineSpec spec = LedgerVisitPipeline.spec(pipeline, accounts, visits, tables.toString(),
                Duration.ofSeconds(PERIOD_SECONDS), PARTITIONS);
        List<GenericRecord> rows = new ArrayList<>();
        try (FlowTestDriver keys = FlowTestDriver.create(spec)) {
            for (int i = 0; i < TABLE_KEYS; i++) {
                GenericRecord r = new GenericData.Record(ReconciliationPipeline.LEDGER_SCHEMA);
                r.put("hash", keys.key(LedgerVisitPipeline.COMPUTATION, Map.of("account", "t" + i)).get("hash"));
                r.put("account", "t" + i);
                r.put("balance", 10L * i);
                rows.add(r);
            }
        }
        ReconciliationPipeline.writeLedger(LocalTablesDirectory.open(tables), "2026-12-01T00:00:00Z", rows);
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String accounts, String visits,
            Path tables, Path state, String id) throws Exception {
        return ChildJvm.builder(LedgerVisitMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, accounts, visits, tables.toString(), state.toString(),
                        Long.toString(PERIOD_SECONDS), Integer.toString(PARTITIONS), id)
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    /** A state key visited without its state. */
    record Missing(int partition, long pass, String account) {
    }

    /** Reads the visit records read_committed and counts them per partition, pass and key. Not thread-safe. */
    private static final class VisitLog implements AutoCloseable {
        private final KafkaConsumer<String, String> consumer;
        private final ObjectMapper json = new ObjectMapper();
        private final Map<Integer, Map<Long, Map<String, Integer>>> counts = new HashMap<>();
        private final Map<Integer, Map<Long, Set<String>>> instances = new HashMap<>();
        final Map<String, Integer> partitionOf = new HashMap<>();
        final Set<String> moved = new HashSet<>();
        final List<String> wrongRows = new ArrayList<>();
        final List<Missing> stateMissing = new ArrayList<>();
        private final Set<String> inState = new HashSet<>();
        long visits;

        VisitLog(KafkaCluster cluster, String topic) {
            Properties c = cluster.clientProperties();
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-verify");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            consumer = new KafkaConsumer<>(c);
            consumer.subscribe(List.of(topic));
        }

        private void poll() {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                JsonNode n;
                try {
                    n = json.readTree(r.value());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                add(n.get("account").asText(), n.get("pass").asLong(), n.get("partition").asInt(),
                        n.get("instance").asText(), n.get("in_state").asBoolean(), n.get("row_balance").asLong(),
                        n.get("read_only").asBoolean());
            }
        }

        private void add(String account, long pass, int partition, String instance, boolean hasState, long balance,
                boolean readOnly) {
            visits++;
            counts.computeIfAbsent(partition, x -> new HashMap<>()).computeIfAbsent(pass, x -> new HashMap<>())
                    .merge(account, 1, Integer::sum);
            instances.computeIfAbsent(partition, x -> new HashMap<>()).computeIfAbsent(pass, x -> new HashSet<>())
                    .add(instance);
            Integer before = partitionOf.put(account, partition);
            if (before != null && before != partition) {
                moved.add(account);
            }
            int i = Integer.parseInt(account.substring(1));
            boolean inTable = account.startsWith("t");
            boolean stateKey = !inTable || i < BOTH;
            long expected = inTable ? 10L * i : -1;
            if (balance != expected || !readOnly || hasState && !stateKey) {
                wrongRows.add(account + " pass " + pass + ": row balance " + balance + " (expected " + expected
                        + "), read-only " + readOnly + ", in state " + hasState);
            }
            if (hasState) {
                inState.add(account);
            } else if (stateKey) {
                stateMissing.add(new Missing(partition, pass, account));
            }
        }

        Set<String> inStateSeen() {
            poll();
            return inState;
        }

        Map<Integer, Long> maxPassByPartition() {
            poll();
            Map<Integer, Long> max = new HashMap<>();
            counts.forEach((part, passes) -> max.put(part, passes.keySet().stream().mapToLong(x -> x).max()
                    .orElse(-1)));
            return max;
        }

        /** Whether every partition has visits of a pass at least {@code n} above {@code base}. */
        boolean minPassAbove(Map<Integer, Long> base, long n) {
            Map<Integer, Long> max = maxPassByPartition();
            for (int part = 0; part < PARTITIONS; part++) {
                if (max.getOrDefault(part, -1L) < base.getOrDefault(part, 0L) + n) {
                    return false;
                }
            }
            return true;
        }

        /** Reads up to the end of every partition as of now (read_committed: the last stable offset). */
        void drain(Duration bound) {
            poll();
            Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
            Await.until(bound, "the visit log read to its end", () -> {
                poll();
                return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
            });
        }

        TreeSet<Long> passes(int partition) {
            return new TreeSet<>(counts.get(partition).keySet());
        }

        Map<String, Integer> counts(int partition, long pass) {
            return counts.get(partition).getOrDefault(pass, Map.of());
        }

        Set<String> instances(int partition, long pass) {
            return instances.get(partition).getOrDefault(pass, Set.of());
        }

        Set<String> keysOf(int partition) {
            Set<String> keys = new HashSet<>();
            partitionOf.forEach((k, v) -> {
                if (v == partition) {
                    keys.add(k);
                }
            });
            return keys;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
