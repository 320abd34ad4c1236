package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The outbox consumers' properties, as {@link SinkServices} gives them to each sink's delivery service. */
class SinkServicesTest {
    /**
     * A delivery call may take the default max.poll.interval.ms (the HTTP sink: a minute of sending and its retry
     * budget): a lower value given for the stream threads would make the outbox consumer leave its group mid-delivery.
     */
    @Test
    void shouldNotGiveOutboxConsumersAMaxPollIntervalBelowItsDefault() {
        assertThat(SinkServices.outboxConsumer(Map.of("max.poll.interval.ms", "60000", "session.timeout.ms", "10000")))
                .containsEntry("max.poll.interval.ms", SinkServices.MIN_MAX_POLL_INTERVAL_MS)
                .containsEntry("session.timeout.ms", "10000");
        assertThat(SinkServices.outboxConsumer(Map.of("max.poll.interval.ms", 900_000)))
                .containsEntry("max.poll.interval.ms", 900_000);
        assertThat(SinkServices.outboxConsumer(Map.of())).doesNotContainKey("max.poll.interval.ms");
    }
}
