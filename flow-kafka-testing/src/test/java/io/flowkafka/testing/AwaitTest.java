package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void shouldNameTheDescriptionAndTheBoundWhenTimingOut() {
        assertThatThrownBy(() -> Await.until(Duration.ofMillis(50), "the moon turns blue", () -> false))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("the moon turns blue")
                .hasMessageContaining("50ms");
    }

    @Test
    void shouldReturnAsSoonAsTheConditionHolds() {
        AtomicInteger polls = new AtomicInteger();
        long start = System.nanoTime();

        Await.until(Duration.ofHours(1), "true at once", () -> polls.incrementAndGet() > 0);

        assertThat(polls).hasValue(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void shouldReturnTheFirstAcceptedValue() {
        AtomicInteger counter = new AtomicInteger();

        int value = Await.untilValue(Duration.ofSeconds(10), "counter reaches 3",
                counter::incrementAndGet, v -> v >= 3);

        assertThat(value).isEqualTo(3);
    }

    @Test
    void shouldShowTheLastValueWhenNoValueIsAccepted() {
        assertThatThrownBy(() -> Await.untilValue(Duration.ofMillis(20), "answer is 42",
                () -> 41, v -> v == 42))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("answer is 42")
                .hasMessageContaining("20ms")
                .hasMessageContaining("last value: 41");
    }

    @Test
    void shouldPropagateAnExceptionFromTheCondition() {
        assertThatThrownBy(() -> Await.until(Duration.ofSeconds(10), "boom", () -> {
            throw new IllegalStateException("boom inside");
        })).isInstanceOf(IllegalStateException.class).hasMessage("boom inside");
    }

    @Test
    void shouldRejectANonPositiveBound() {
        assertThatThrownBy(() -> Await.until(Duration.ZERO, "anything", () -> true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bound must be positive but was PT0S");
    }
}
