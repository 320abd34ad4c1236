package io.flowkafka.internal.state;

import io.flowkafka.api.FlowException;
import io.flowkafka.internal.serde.StateSchemas;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import io.flowkafka.spi.ClientProperties;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaParseException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schemas a pipeline's Avro states were ever written with, kept in the compacted topic
 * {@code <flow.topic.prefix><pipeline>.schemas} (one partition; key {@code <computation>/<state>/<fingerprint>},
 * value the schema's JSON). It owns the rule that a state's schema changes only to one that can read every row written
 * before: at start an instance reads the topic, refuses to start if a state's schema in the spec cannot read one it
 * recorded (Avro's reader/writer compatibility, naming the computation, the state and why), registers the recorded
 * schemas for reading old rows ({@link StateSchemas}), then records the spec's own.
 *
 * <p>ACLs: Read, Write and Describe on the topic (the prefixed ACL on {@code <prefix><pipeline>.} covers it).
 */
public final class StateSchemaTopic {
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);
    private static final Logger LOG = LoggerFactory.getLogger(StateSchemaTopic.class);

    private StateSchemaTopic() {
    }

    /** The topic of a pipeline: {@code <topicPrefix><pipeline>.schemas}. */
    public static String name(String topicPrefix, String pipeline) {
        return topicPrefix + pipeline + ".schemas";
    }

    /**
     * Reads the recorded schemas, checks the spec's states against them, registers them and records the spec's.
     *
     * @throws FlowException if a state's schema cannot read rows of one it had, or the topic cannot be read or written
     */
    public static void sync(PipelineSpec spec, String topic, Map<?, ?> streamsProps) {
        Map<String, Schema> recorded = read(spec.name(), topic, streamsProps);
        List<String> problems = new ArrayList<>();
        Map<String, Schema> current = new LinkedHashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            for (StateSpec s : c.states().values()) {
                if (s.schema() == null) {
                    continue;
                }
                String state = c.id() + "/" + s.name();
                current.put(state + "/" + Long.toHexString(StateSchemas.fingerprint(s.schema())), s.schema());
                recorded.forEach((key, old) -> {
                    int fp = key.lastIndexOf('/');
                    if (fp < 0 || !key.substring(0, fp).equals(state)) {
                        return;
                    }
                    StateSchemas.register(old);
                    var check = SchemaCompatibility.checkReaderWriterCompatibility(s.schema(), old);
                    if (check.getType() != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
                        problems.add("computation '" + c.id() + "', state '" + s.name() + "': its schema cannot read "
                                + "the rows written with an earlier one (" + describe(check) + "); fix: keep the "
                                + "change readable (a new field needs a default; a field keeps its type or widens it), "
                                + "or use a new state name or a new pipeline name");
                    }
                });
            }
        }
        if (!problems.isEmpty()) {
            throw new FlowException("pipeline '" + spec.name() + "' cannot start:\n  - " + String.join("\n  - ", problems));
        }
        current.keySet().removeAll(recorded.keySet());
        if (!current.isEmpty()) {
            write(spec.name(), topic, streamsProps, current);
        }
    }

    private static String describe(SchemaCompatibility.SchemaPairCompatibility check) {
        List<String> out = new ArrayList<>();
        for (var i : check.getResult().getIncompatibilities()) {
            out.add(i.getType() + " at " + i.getLocation() + (i.getMessage() == null ? "" : ": " + i.getMessage()));
        }
        return out.isEmpty() ? check.getDescription() : String.join("; ", out);
    }

    private static Map<String, Schema> read(String pipeline, String topic, Map<?, ?> streamsProps) {
        try {
            return readAll(pipeline, topic, streamsProps);
        } catch (FlowException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new FlowException("pipeline '" + pipeline + "' could not read its state schemas from " + topic + ": "
                    + e + "; check the topic's Read and Describe ACLs and the brokers", e);
        }
    }

    private static Map<String, Schema> readAll(String pipeline, String topic, Map<?, ?> streamsProps) {
        Map<String, Object> props = ClientProperties.consumer(streamsProps);
        props.remove(ConsumerConfig.CLIENT_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        TopicPartition partition = new TopicPartition(topic, 0);
        Map<String, Schema> out = new LinkedHashMap<>();
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), READ_TIMEOUT).get(partition);
            while (consumer.position(partition, READ_TIMEOUT) < end) {
                if (System.nanoTime() > deadline) {
                    throw new FlowException("pipeline '" + pipeline + "' could not read its state schemas from " + topic
                            + " within " + READ_TIMEOUT.toSeconds() + " s; check the topic's Read ACL and the brokers");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (r.key() == null) {
                        continue;
                    }
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    if (r.value() == null) {
                        out.remove(key);
                        continue;
                    }
                    try {
                        out.put(key, new Schema.Parser().parse(new String(r.value(), StandardCharsets.UTF_8)));
                    } catch (SchemaParseException e) {
                        LOG.warn("pipeline '{}': record {} of {} at offset {} is no Avro schema ({}); skipped", pipeline,
                                key, topic, r.offset(), e.getMessage());
                    }
                }
            }
        }
        return out;
    }

    private static void write(String pipeline, String topic, Map<?, ?> streamsProps, Map<String, Schema> schemas) {
        Map<String, Object> props = ClientProperties.producer(streamsProps);
        props.remove(ProducerConfig.CLIENT_ID_CONFIG);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (Map.Entry<String, Schema> e : schemas.entrySet()) {
                producer.send(new ProducerRecord<>(topic, 0, e.getKey().getBytes(StandardCharsets.UTF_8),
                        e.getValue().toString().getBytes(StandardCharsets.UTF_8))).get(READ_TIMEOUT.toMillis(),
                        TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new FlowException("pipeline '" + pipeline + "' could not record its state schemas in " + topic + ": "
                    + e + "; check the topic's Write ACL and the brokers", e);
        }
    }
}
