package io.flowkafka.examples.reliability;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.KafkaCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Everything the sink's target topic holds, read read_committed from its start: every record kept (a duplicate
 * is a second entry under its id), with its broker append time (the topic uses {@code LogAppendTime}).
 *
 * <p>Not thread-safe: one reader thread.
 */
final class TargetLog implements AutoCloseable {
    /**
     * One record of the target.
     *
     * @param id the key: {@code m-i}, {@code t-m-i} or {@code v-<user>-<pass>}
     * @param kind message, timer or visit
     * @param user the group-by key
     * @param count the user's count when written
     * @param pass the visitor pass (visits only)
     * @param partition the computation partition that wrote it
     * @param appendMs when the broker appended it
     * @param calledMs when the call that wrote it ran (wall clock of the instance)
     */
    record Out(String id, String kind, String user, long count, long pass, int partition, long appendMs,
            long calledMs) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions;
    private final Map<String, List<Out>> byId = new HashMap<>();

    TargetLog(KafkaCluster cluster, String topic) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        partitions = consumer.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition()))
                .toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Reads what is there now (one poll). */
    void poll() {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            try {
                JsonNode n = JSON.readTree(r.value());
                Out out = new Out(n.get("id").asText(), n.get("kind").asText(), n.get("user").asText(),
                        n.get("count").asLong(), n.get("pass").asLong(), n.get("partition").asInt(), r.timestamp(),
                        n.get("calledMs").asLong());
                byId.computeIfAbsent(out.id(), k -> new ArrayList<>(1)).add(out);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the target record at " + r.topic() + "-" + r.partition()
                        + "@" + r.offset(), e);
            }
        }
    }

    /** Reads up to the last stable offsets of now, so every transaction committed so far is counted. */
    void drain(Duration bound) {
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
        long deadline = System.nanoTime() + bound.toNanos();
        while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the target was not read to its end " + end + " within " + bound);
            }
            poll();
        }
    }

    Map<String, List<Out>> byId() {
        return byId;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
