package io.flowkafka.internal.outbox;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * A stream thread's producer that tells {@link EpochCommits} how each transaction ended: the at-most-once
 * messages held for it are released only after {@code commitTransaction()} returned, and dropped when the
 * transaction was aborted. Everything else is the wrapped producer's.
 */
public final class CommitObservingProducer implements Producer<byte[], byte[]> {
    private final Producer<byte[], byte[]> delegate;
    private final EpochCommits commits;

    public CommitObservingProducer(Producer<byte[], byte[]> delegate, EpochCommits commits) {
        this.delegate = delegate;
        this.commits = commits;
    }

    @Override
    public void commitTransaction() {
        delegate.commitTransaction(); // throws: the transaction is still open; a later commit or abort decides
        commits.committed();
    }

    @Override
    public void abortTransaction() {
        commits.aborted();
        delegate.abortTransaction();
    }

    @Override
    public void initTransactions() {
        delegate.initTransactions();
    }

    @Override
    public void beginTransaction() {
        delegate.beginTransaction();
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group) {
        delegate.sendOffsetsToTransaction(offsets, group);
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        delegate.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        delegate.unregisterMetricFromSubscription(metric);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        return delegate.send(record);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        return delegate.send(record, callback);
    }

    @Override
    public void flush() {
        delegate.flush();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return delegate.partitionsFor(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return delegate.metrics();
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return delegate.clientInstanceId(timeout);
    }

    @Override
    public void close() {
        commits.aborted();
        delegate.close();
    }

    @Override
    public void close(Duration timeout) {
        commits.aborted();
        delegate.close(timeout);
    }
}
