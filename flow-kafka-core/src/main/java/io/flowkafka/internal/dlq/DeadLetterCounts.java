package io.flowkafka.internal.dlq;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The counter {@value #METER} of each computation (tags {@code pipeline}, {@code computation}): inputs sent to the
 * dead-letter topic, by the processing-exception handler and by the tasks' timers, visits and punctuated sources
 * alike. Registered for every computation up front, so a series exists at 0 before the first dead letter. Rule
 * kept: one counter per computation, shared by its tasks, so a rebalance neither resets nor duplicates it.
 *
 * <p>Threading: thread-safe; found by the handler and the tasks in the Kafka Streams properties under
 * {@link #CONFIG}.
 */
public final class DeadLetterCounts {
    /** Key of this object in the Kafka Streams properties. */
    public static final String CONFIG = "flow.internal.dead.letter.counts";
    /** The counter's name. */
    public static final String METER = "flow.dead_letters";

    private final MeterRegistry registry;
    private final String pipeline;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public DeadLetterCounts(MeterRegistry registry, String pipeline, Collection<String> computations) {
        this.registry = registry;
        this.pipeline = pipeline;
        computations.forEach(this::counter);
    }

    /** Counts one dead letter of {@code computation}. */
    public void count(String computation) {
        counter(computation).increment();
    }

    private Counter counter(String computation) {
        return counters.computeIfAbsent(computation, c -> Counter.builder(METER)
                .description("Inputs (messages, timers, visits) sent to the dead-letter topic")
                .tags("pipeline", pipeline, "computation", c).register(registry));
    }

    /** The counters registered, for the runtime to remove when it closes. */
    public List<Meter> meters() {
        return new ArrayList<>(counters.values());
    }
}
