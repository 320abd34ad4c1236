package io.flowkafka.connectors.http;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The delay before a retry: exponential backoff from {@code retry_backoff} up to {@code max_retry_backoff} with
 * "equal jitter" (half fixed, half random, so retries of many messages spread out yet never come sooner than half the
 * backoff), and never sooner than a {@code Retry-After} the target sent.
 */
final class RetryDelay {
    private RetryDelay() {
    }

    /**
     * The backoff before retry number {@code retry} (1 for the first).
     *
     * @param retry the retry about to be made, from 1
     * @param base {@code retry_backoff}
     * @param max {@code max_retry_backoff}
     * @return a delay between half the capped exponential backoff and all of it
     */
    static Duration backoff(int retry, Duration base, Duration max) {
        long capped = Math.min(max.toMillis(), base.toMillis() << Math.min(20, retry - 1));
        long half = capped / 2;
        return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(capped - half + 1));
    }

    /**
     * Reads a {@code Retry-After} header: delay seconds or an HTTP date.
     *
     * @param value the header value, or null
     * @param nowMs the current time in milliseconds since the epoch
     * @return how long the target asks to wait (zero for a date in the past), or null when absent or unreadable
     */
    static @Nullable Duration retryAfter(@Nullable String value, long nowMs) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.trim();
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(v)));
        } catch (NumberFormatException e) {
            try {
                long at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
                return Duration.ofMillis(Math.max(0, at - nowMs));
            } catch (DateTimeParseException e2) {
                return null;
            }
        }
    }
}
