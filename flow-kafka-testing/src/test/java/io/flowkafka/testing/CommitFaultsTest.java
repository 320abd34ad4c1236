package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** {@link CommitFaults#onDemand}: commits fail when triggered, as often as triggered, and only then. */
class CommitFaultsTest {
    private static final Map<TopicPartition, OffsetAndMetadata> OFFSETS =
            Map.of(new TopicPartition("in", 0), new OffsetAndMetadata(1));

    @Test
    void shouldFailTheNextCommitAfterEachTriggerUntilTheTransactionIsAborted() {
        CommitFaults faults = CommitFaults.onDemand(true);
        MockProducer<byte[], byte[]> mock = new MockProducer<>(true, null, new ByteArraySerializer(),
                new ByteArraySerializer());
        Producer<byte[], byte[]> producer = decorate(faults, mock);
        producer.initTransactions();

        commit(producer);
        assertThat(mock.transactionCommitted()).as("nothing triggered: the commit goes through").isTrue();

        faults.trigger();
        producer.beginTransaction();
        producer.sendOffsetsToTransaction(OFFSETS, new ConsumerGroupMetadata("g"));
        assertThatThrownBy(producer::commitTransaction).isInstanceOf(TimeoutException.class);
        assertThatThrownBy(producer::commitTransaction).as("the retry fails too, until aborted")
                .isInstanceOf(TimeoutException.class);
        producer.abortTransaction();
        assertThat(faults.injected()).isEqualTo(2);
        assertThat(faults.aborted()).isEqualTo(1);

        commit(producer);
        assertThat(faults.injected()).as("one trigger, one fault").isEqualTo(2);

        faults.trigger();
        faults.trigger();
        assertThatThrownBy(() -> commit(producer)).isInstanceOf(TimeoutException.class);
        producer.abortTransaction();
        assertThatThrownBy(() -> commit(producer)).as("triggers add up").isInstanceOf(TimeoutException.class);
        producer.abortTransaction();
        commit(producer);
        assertThat(faults.aborted()).isEqualTo(3);
    }

    @Test
    void shouldRefuseATriggerOnAFaultOfTheFirstMatchingCommit() {
        assertThatThrownBy(() -> CommitFaults.failOnce(offsets -> true).trigger())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("onDemand");
    }

    private static void commit(Producer<byte[], byte[]> producer) {
        producer.beginTransaction();
        producer.sendOffsetsToTransaction(OFFSETS, new ConsumerGroupMetadata("g"));
        producer.commitTransaction();
    }

    @SuppressWarnings("unchecked")
    private static Producer<byte[], byte[]> decorate(CommitFaults faults, Producer<byte[], byte[]> producer) {
        Properties props = faults.install(new Properties());
        return ((UnaryOperator<Producer<byte[], byte[]>>) props.get(FlowRuntime.PRODUCER_DECORATOR_CONFIG))
                .apply(producer);
    }
}
