package io.flowkafka.internal.skip;

import io.flowkafka.api.Message;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * A task's check of its computation's {@code skip_if_expression} on each input message, and the count of the
 * messages skipped ({@code flow.messages.skipped}, tagged pipeline and computation, shared by the computation's
 * tasks). A skipped message is acknowledged as a processed one is (its offset commits) with no call, output or
 * state change: the caller keeps that rule by not running the call.
 *
 * <p>Threading: one instance per task attempt, used by its stream thread.
 */
public final class MessageSkipper {
    /** The counter's name. */
    public static final String SKIPPED_METER = "flow.messages.skipped";

    private final SkipSetting setting;
    private final Counter skipped;

    /** Registers the counter (or finds it, for the computation's other tasks) in {@code meters}. */
    public MessageSkipper(SkipSetting setting, MeterRegistry meters, String pipeline, String computation) {
        this.setting = setting;
        this.skipped = Counter.builder(SKIPPED_METER)
                .description("Input messages skipped because the computation's skip_if_expression matched them")
                .tags("pipeline", pipeline, "computation", computation).register(meters);
    }

    /** Whether {@code message} is to be skipped now; counts it if so. */
    public boolean skips(Message message) {
        SkipExpression e = setting.current();
        if (e == null || !e.matches(message)) {
            return false;
        }
        skipped.increment();
        return true;
    }
}
