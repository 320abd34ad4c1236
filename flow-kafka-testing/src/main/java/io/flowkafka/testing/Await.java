package io.flowkafka.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Bounded waits for tests: poll a condition until it holds or a bound passes.
 *
 * <p>Use it instead of {@code Thread.sleep}: it returns as soon as the condition holds and, on
 * timeout, fails with a message that says what was awaited. Between polls it backs off from
 * 1 ms to 100 ms. The condition runs on the calling thread; an exception it throws propagates
 * at once.
 *
 * <pre>{@code
 * Await.until(Duration.ofSeconds(30), "streams app RUNNING",
 *     () -> streams.state() == KafkaStreams.State.RUNNING);
 * }</pre>
 *
 * <p>Thread-safe: it holds no state.
 */
public final class Await {
    private static final long FIRST_BACKOFF_NANOS = Duration.ofMillis(1).toNanos();
    private static final long MAX_BACKOFF_NANOS = Duration.ofMillis(100).toNanos();

    private Await() {}

    /**
     * Polls {@code condition} until it returns true.
     *
     * @param bound how long to wait; must be positive
     * @param description what is awaited, such as {@code "1000 records in output"}; it appears in
     *     the failure message
     * @param condition polled on the calling thread
     * @throws AssertionError if the condition is still false when {@code bound} has passed, or
     *     if the thread is interrupted; the message names {@code description} and {@code bound}
     * @throws IllegalArgumentException if {@code bound} is zero or negative
     */
    public static void until(Duration bound, String description, BooleanSupplier condition) {
        Objects.requireNonNull(condition, "condition");
        poll(bound, description, condition::getAsBoolean, Boolean::booleanValue, false,
                AssertionError::new);
    }

    /**
     * Polls {@code supplier} until {@code accept} holds for its value, and returns that value.
     *
     * @param <T> the type of the awaited value
     * @param bound how long to wait; must be positive
     * @param description what is awaited; it appears in the failure message
     * @param supplier polled on the calling thread; may return null
     * @param accept tested against each value supplied
     * @return the first accepted value
     * @throws AssertionError if no value is accepted when {@code bound} has passed, or if the
     *     thread is interrupted; the message names {@code description}, {@code bound} and the
     *     last value supplied
     * @throws IllegalArgumentException if {@code bound} is zero or negative
     */
    public static <T extends @Nullable Object> T untilValue(
            Duration bound, String description, Supplier<T> supplier, Predicate<? super T> accept) {
        return poll(bound, description, supplier, accept, true, AssertionError::new);
    }

    /** The polling loop shared with the clusters, which fail with their own exception type. */
    static <T extends @Nullable Object, E extends Throwable> T poll(
            Duration bound,
            String description,
            Supplier<T> supplier,
            Predicate<? super T> accept,
            boolean showLastValue,
            Function<String, E> failure) throws E {
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(supplier, "supplier");
        Objects.requireNonNull(accept, "accept");
        if (bound.isNegative() || bound.isZero()) {
            throw new IllegalArgumentException("bound must be positive but was " + bound);
        }
        long deadline = System.nanoTime() + bound.toNanos();
        long backoff = FIRST_BACKOFF_NANOS;
        while (true) {
            T value = supplier.get();
            if (accept.test(value)) {
                return value;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                throw failure.apply("not true within " + format(bound) + ": " + description
                        + (showLastValue ? " (last value: " + value + ")" : ""));
            }
            try {
                Thread.sleep(Math.max(1, Duration.ofNanos(Math.min(backoff, remaining)).toMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure.apply("interrupted while waiting up to " + format(bound) + " for: "
                        + description);
            }
            backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
        }
    }

    /** {@code 250ms}, {@code 30s}, or ISO-8601 for anything else. */
    static String format(Duration d) {
        if (d.toMillis() < 1000 || d.toMillis() % 1000 != 0) {
            return d.toNanos() % 1_000_000 == 0 ? d.toMillis() + "ms" : d.toString();
        }
        return d.toSeconds() + "s";
    }
}
