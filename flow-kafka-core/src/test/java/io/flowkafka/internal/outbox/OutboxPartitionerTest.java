package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** Outbox records go to the outbox partition of the task that wrote them, so one partition holds one task's order. */
class OutboxPartitionerTest {
    @Test
    void shouldRouteToTheWritingTasksPartition() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("flow.meta", new byte[] {1});
        headers.add(OutboxService.PARTITION_HEADER, OutboxService.partitionHeader(5));
        assertThat(OutboxPartitioner.INSTANCE.partitions("o", new byte[0], new byte[0], headers, 8))
                .isEqualTo(Optional.of(Set.of(5)));
    }

    @Test
    void shouldWrapATaskPartitionBeyondTheOutboxPartitions() {
        RecordHeaders headers = new RecordHeaders();
        headers.add(OutboxService.PARTITION_HEADER, OutboxService.partitionHeader(6));
        assertThat(OutboxPartitioner.INSTANCE.partitions("o", null, null, headers, 4)).isEqualTo(Optional.of(Set.of(2)));
    }

    @Test
    void shouldRejectARecordWithoutTheHeaderNamingIt() {
        assertThatThrownBy(() -> OutboxPartitioner.INSTANCE.partitions("o", null, null, new RecordHeaders(), 4))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(OutboxService.PARTITION_HEADER);
    }
}
