package io.flowkafka.examples.guarantees;

import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One kill test of {@link CrashTestMain}'s pipelines: its input ({@code {"id": "m<i>", "user"}} JSON keyed by user),
 * its instances, and the committed outputs read so far, counted by the ids each names. Closes its reader.
 */
final class CrashTestRun implements AutoCloseable {
    private final KafkaCluster cluster;
    private final String kind;
    private final String pipeline;
    private final String input;
    private final String output;
    private final Path state;
    private final Function<ConsumerRecord<byte[], byte[]>, List<String>> idsOf;
    private final Map<String, Integer> seen = new HashMap<>();
    private final KafkaConsumer<byte[], byte[]> reader;

    CrashTestRun(KafkaCluster cluster, String kind, String pipeline, String input, String output, Path state,
            Function<ConsumerRecord<byte[], byte[]>, List<String>> idsOf) {
        this.cluster = cluster;
        this.kind = kind;
        this.pipeline = pipeline;
        this.input = input;
        this.output = output;
        this.state = state;
        this.idsOf = idsOf;
        cluster.createTopic(input, 4);
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-verify");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500"); // finds the sink topic once the pipeline created it
        reader = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        reader.subscribe(List.of(output));
    }

    ChildJvm instance(String name) {
        return ChildJvm.builder(CrashTestMain.class).maxHeap("384m")
                .args(kind, cluster.bootstrapServers(), pipeline, input, output, state.resolve(name).toString())
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    void produce(int messages, int users, long seed) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Random r = new Random(seed);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < messages; i++) {
                String user = "u" + r.nextInt(users);
                producer.send(new ProducerRecord<>(input, user, "{\"id\":\"m" + i + "\",\"user\":\"" + user + "\"}"));
            }
        }
    }

    /** Reads what is there; returns the number of distinct ids seen so far. */
    int read() {
        reader.poll(Duration.ofMillis(200)).forEach(this::count);
        return seen.size();
    }

    /** Reads for {@code window} more: an id written again after the last one awaited would be here. */
    void readQuietWindow(Duration window) {
        reader.poll(window).forEach(this::count);
    }

    /** Each id seen, with the number of outputs naming it. */
    Map<String, Integer> seen() {
        return seen;
    }

    /** The ids seen more than once. */
    List<Map.Entry<String, Integer>> repeated() {
        return seen.entrySet().stream().filter(e -> e.getValue() > 1).toList();
    }

    private void count(ConsumerRecord<byte[], byte[]> r) {
        idsOf.apply(r).forEach(id -> seen.merge(id, 1, Integer::sum));
    }

    @Override
    public void close() {
        reader.close();
    }
}
