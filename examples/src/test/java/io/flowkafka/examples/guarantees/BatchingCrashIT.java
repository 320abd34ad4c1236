package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * SwiftMap batching ({@code allow_batching_with_relaxed_guarantees}) under SIGKILL, on a real broker. The docs
 * (processing-modes-and-batching.md): "the buffer and the input offsets commit together, and an aborted attempt's
 * outputs are never read, so each parent's content reaches downstream exactly once even when a replay cuts its
 * batches differently." Two instances collapse 30k messages into per-user batch outputs listing their input ids; one
 * is killed mid-stream while batches wait in its buffers, and restarted. Read read_committed, every input id is in
 * exactly one output.
 */
@WithKafka
class BatchingCrashIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int MESSAGES = 30_000;
    private static final int USERS = 300;
    private static final long SEED = Long.getLong("flow.it.seed", 20261207L);

    @Test
    @Timeout(600)
    void shouldPassEachParentsContentDownstreamOnceWhenAnInstanceIsKilledMidBatch(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("batching");
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 4);
        Path state = Files.createTempDirectory(tempRoot, "batching");
        long killAt = 5_000 + new Random(SEED).nextInt(15_000);
        try (ChildJvm a = instance(cluster, pipeline, input, output, state, "a");
                ChildJvm b = instance(cluster, pipeline, input, output, state, "b")) {
            produce(cluster, input);
            Map<String, Integer> seen = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> reader = reader(cluster, pipeline, output)) {
                Await.until(Duration.ofMinutes(3), killAt + " ids in committed outputs",
                        () -> read(reader, seen) >= killAt);
                a.kill(); // SIGKILL: its buffered batches and its open transaction die with it
                assertThat(a.isAlive()).isFalse();
                try (ChildJvm a2 = instance(cluster, pipeline, input, output, state, "a2")) {
                    Await.until(Duration.ofMinutes(3), "all " + MESSAGES + " ids in committed outputs",
                            () -> read(reader, seen) >= MESSAGES);
                    read(reader, seen); // a duplicate written after the last id would be here too
                    reader.poll(Duration.ofSeconds(2)).forEach(r -> count(r, seen));
                }
            }
            assertThat(seen).as("distinct ids").hasSize(MESSAGES);
            assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).toList()).as("ids in more than one output")
                    .isEmpty();
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, String output, Path state,
            String name) {
        return ChildJvm.builder(BatchingMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, input, output, state.resolve(name).toString())
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    private static void produce(KafkaCluster cluster, String input) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Random r = new Random(SEED + 1);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < MESSAGES; i++) {
                String user = "u" + r.nextInt(USERS);
                producer.send(new ProducerRecord<>(input, user, "{\"id\":\"m" + i + "\",\"user\":\"" + user + "\"}"));
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> reader(KafkaCluster cluster, String pipeline, String output) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-verify");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500"); // finds the sink topic once the pipeline created it
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        c.subscribe(List.of(output));
        return c;
    }

    /** Reads what is there, counting each id; returns the number of distinct ids seen. */
    private static int read(KafkaConsumer<byte[], byte[]> reader, Map<String, Integer> seen) {
        reader.poll(Duration.ofMillis(200)).forEach(r -> count(r, seen));
        return seen.size();
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private static void count(ConsumerRecord<byte[], byte[]> r, Map<String, Integer> seen) {
        try {
            JsonNode n = JSON.readTree(r.value());
            for (String id : n.get("ids").asText().split(" ")) {
                seen.merge(id, 1, Integer::sum);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
