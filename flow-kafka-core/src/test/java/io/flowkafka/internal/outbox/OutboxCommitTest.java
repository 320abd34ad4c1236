package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;

/** The delivery group's commits past watermark records, and where a deliverer with its own progress resumes. */
class OutboxCommitTest {
    @Test
    void shouldCommitABatchWithItsMarkOfOrigin() {
        OffsetAndMetadata c = OutboxCommit.of(10, OptionalLong.of(10));
        assertThat(c).isEqualTo(new OffsetAndMetadata(10, "flow.messages_next=10"));
        assertThat(OutboxCommit.setElsewhere(c)).isFalse();
        assertThat(OutboxCommit.messagesNext(c)).hasValue(10);
        assertThat(OutboxCommit.messagesNext(new OffsetAndMetadata(7, "something else"))).hasValue(7);
        assertThat(OutboxCommit.messagesNext(null)).isEmpty();
    }

    @Test
    void shouldRememberTheLastBatchPastWatermarkRecords() {
        // records 10..14 are watermark records after the batch ending at 10
        OffsetAndMetadata c = OutboxCommit.of(15, OptionalLong.of(10));
        assertThat(c.offset()).isEqualTo(15);
        assertThat(OutboxCommit.messagesNext(c)).as("what the deliverer is told").hasValue(10);
        // a deliverer whose own progress (a marker) says 10 resumes past the watermark records (they may be purged)
        assertThat(OutboxCommit.resumeAt(10, OptionalLong.of(10), c)).isEqualTo(15);
        assertThat(OutboxCommit.resumeAt(12, OptionalLong.of(10), c)).isEqualTo(15);
        // one behind the last batch replays messages: from where it says
        assertThat(OutboxCommit.resumeAt(8, OptionalLong.of(10), c)).isEqualTo(8);
        // one ahead of the commit (delivered, commit lost) resumes there
        assertThat(OutboxCommit.resumeAt(20, OptionalLong.of(10), c)).isEqualTo(20);
    }

    @Test
    void shouldTellAnOffsetAnOperatorSetFromTheServicesCommits() {
        // kafka-consumer-groups --reset-offsets writes no metadata
        assertThat(OutboxCommit.setElsewhere(new OffsetAndMetadata(6))).isTrue();
        assertThat(OutboxCommit.setElsewhere(new OffsetAndMetadata(6, "something else"))).isTrue();
        assertThat(OutboxCommit.setElsewhere(OutboxCommit.of(6, OptionalLong.empty()))).isFalse();
        assertThat(OutboxCommit.setElsewhere(OutboxCommit.of(6, OptionalLong.of(4)))).isFalse();
        assertThat(OutboxCommit.setElsewhere(null)).isFalse();
    }

    @Test
    void shouldTellNoBatchWhenOnlyWatermarkRecordsWereCommitted() {
        OffsetAndMetadata c = OutboxCommit.of(5, OptionalLong.empty());
        assertThat(OutboxCommit.messagesNext(c)).as("as if nothing was committed").isEmpty();
        assertThat(OutboxCommit.resumeAt(0, OptionalLong.empty(), c)).isEqualTo(5);
    }
}
