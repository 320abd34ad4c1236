package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

/** Backoff with jitter stays within its bounds; Retry-After is read as seconds or as an HTTP date. */
class RetryDelayTest {
    @Test
    void shouldDoubleTheBackoffUpToItsCapWithJitterOfAtMostHalf() {
        Duration base = Duration.ofMillis(100);
        Duration max = Duration.ofMillis(1_000);
        for (int i = 0; i < 200; i++) {
            assertThat(RetryDelay.backoff(1, base, max).toMillis()).isBetween(50L, 100L);
            assertThat(RetryDelay.backoff(3, base, max).toMillis()).isBetween(200L, 400L);
            assertThat(RetryDelay.backoff(10, base, max).toMillis()).isBetween(500L, 1_000L);
            assertThat(RetryDelay.backoff(90, base, max).toMillis()).as("no overflow").isBetween(500L, 1_000L);
        }
    }

    @Test
    void shouldReadRetryAfterAsSecondsOrAnHttpDate() {
        long now = ZonedDateTime.of(2026, 12, 3, 12, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
        assertThat(RetryDelay.retryAfter("7", now)).isEqualTo(Duration.ofSeconds(7));
        assertThat(RetryDelay.retryAfter("Thu, 03 Dec 2026 12:00:30 GMT", now)).isEqualTo(Duration.ofSeconds(30));
        assertThat(RetryDelay.retryAfter(DateTimeFormatter.RFC_1123_DATE_TIME.format(
                ZonedDateTime.of(2026, 12, 3, 11, 0, 0, 0, ZoneOffset.UTC)), now)).as("in the past").isZero();
        assertThat(RetryDelay.retryAfter("soon", now)).isNull();
        assertThat(RetryDelay.retryAfter(null, now)).isNull();
    }
}
