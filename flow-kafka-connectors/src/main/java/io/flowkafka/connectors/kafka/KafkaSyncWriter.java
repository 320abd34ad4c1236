package io.flowkafka.connectors.kafka;

import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SyncSinkWriter;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Writes a {@code TAtLeastOnceKafkaSink}: one idempotent producer (acks=all, no transactions) per
 * runtime instance on the target cluster, shared by the tasks. A send failure is remembered per
 * task and fails that task's next epoch commit ({@link #flush}), which then replays and sends again:
 * at least once, never lost. Thread-safe.
 */
final class KafkaSyncWriter implements SyncSinkWriter {
    private final String topic;
    private final String name;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Map<Integer, AtomicReference<Failure>> failures = new ConcurrentHashMap<>();

    /** The first failed send of a task partition's epoch, with the record's bytes. */
    private record Failure(Exception error, byte @Nullable [] key, byte @Nullable [] value, long timestampMs) {
    }

    KafkaSyncWriter(SinkContext context) {
        this.topic = String.valueOf(context.sink().parameters().get("topic"));
        this.name = "sink '" + context.sink().id() + "' (TAtLeastOnceKafkaSink to topic " + topic + ")";
        Map<String, Object> props = new HashMap<>();
        if (!context.sinkProperties().containsKey("bootstrap.servers")) {
            props.putAll(context.pipelineClientProperties());
        }
        props.putAll(context.sinkProperties());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, context.applicationId() + ".sink." + context.sink().id());
        // the epoch waits for the acknowledgements inside Kafka Streams' transaction (transaction.timeout.ms 10 s by
        // default): give up on a record well before that, so a slow target aborts the epoch cleanly instead of
        // getting the stream thread fenced; set them under flow.sink.<id>.* to change
        props.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000);
        props.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 6000);
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 6000);
        this.producer = new KafkaProducer<>(props);
    }

    @Override
    public void write(int partition, OutboxRecord record) {
        AtomicReference<Failure> failure = failures.computeIfAbsent(partition, p -> new AtomicReference<>());
        try {
            producer.send(new ProducerRecord<>(topic, null, record.timestampMs(), record.key(), record.value(),
                    record.headers()), (md, e) -> {
                        if (e != null) {
                            failure.compareAndSet(null, new Failure(e, record.key(), record.value(), record.timestampMs()));
                        }
                    });
        } catch (RuntimeException e) {
            failure.compareAndSet(null, new Failure(e, record.key(), record.value(), record.timestampMs()));
        }
    }

    @Override
    public void flush(int partition) throws OutboxDeliveryException {
        try {
            producer.flush();
        } catch (KafkaException e) {
            throw new OutboxDeliveryException(name + ": waiting for acknowledgements failed: " + e, e);
        }
        AtomicReference<Failure> failure = failures.get(partition);
        Failure f = failure == null ? null : failure.getAndSet(null);
        if (f != null) {
            Exception e = f.error();
            Throwable record = OutboxDeliveryException.recordRejection(e);
            if (record != null) {
                // this record can never be written, but the pipeline need not stop: its producing input becomes a
                // dead letter when the epoch replays
                throw OutboxDeliveryException.rejected(name + ": the target rejected a record of task partition "
                        + partition + " for good (" + record + ")", f.key(), f.value(), f.timestampMs(), record);
            }
            Throwable bad = KafkaDeliverer.nonRetriable(e);
            if (bad != null) {
                throw OutboxDeliveryException.fatal(name + ": the target rejected a record of task partition " + partition
                        + " for good (" + bad + "); replaying cannot help, so the pipeline stops: fix the target topic,"
                        + " its ACLs or the record (e.g. max.message.bytes), then restart");
            }
            throw new OutboxDeliveryException(name + ": a record of task partition " + partition
                    + " was not acknowledged: " + e, e);
        }
    }

    @Override
    public void discard(int partition) {
        failures.remove(partition); // a failed send of the aborted epoch: its replay sends the record again
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(10));
    }
}
