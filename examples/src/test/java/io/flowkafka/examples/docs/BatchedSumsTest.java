package io.flowkafka.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.testing.FlowTestDriver;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link BatchedSums} on the test driver: one output per user per batch, its parents that user's messages. */
class BatchedSumsTest {
    @Test
    void shouldSumEachUsersMessagesOfABatchIntoOneOutput() {
        try (FlowTestDriver driver = FlowTestDriver.create(BatchedSums.spec("docs-batching", "amounts", 4))) {
            MessageId a1 = driver.pipe("events", Map.of("user", "alice", "amount", 1L), 100);
            MessageId b1 = driver.pipe("events", Map.of("user", "bob", "amount", 10L), 200);
            MessageId a2 = driver.pipe("events", Map.of("user", "alice", "amount", 2L), 300);
            assertThat(driver.readStream("sums")).as("a batch of 4 is not full yet").isEmpty();
            MessageId a3 = driver.pipe("events", Map.of("user", "alice", "amount", 4L), 400);

            List<Message> sums = driver.readStream("sums");
            assertThat(sums).extracting(m -> m.getPayload().get("user").toString(), m -> m.getPayload().get("total"))
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("alice", 7L),
                            org.assertj.core.groups.Tuple.tuple("bob", 10L));
            assertThat(sums.get(0).getParentIds()).containsExactly(a1, a2, a3);
            assertThat(sums.get(1).getParentIds()).containsExactly(b1);
        }
    }
}
