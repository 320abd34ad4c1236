package io.flowkafka.spec;

import java.util.Locale;

/**
 * A computation's {@code processing_mode}, set per Transform computation (Flow: "at the
 * TTransformComputation level"); the default is {@code exactly_once}. Validation rejects
 * {@code at_least_once_consistent} on other kinds.
 *
 * <p>Both modes run on Kafka Streams' {@code exactly_once_v2}, so on Kafka they guarantee the same:
 * each input message's state writes, output messages and timers commit in one Kafka transaction
 * with its consumed offset, or not at all. Flow's {@code at_least_once_consistent} exists to skip
 * the input dedup by {@code message_id}; on Kafka that dedup is the transactional offset commit
 * itself, which costs nothing extra, while Kafka Streams' {@code at_least_once} would let state
 * writes run ahead of committed offsets after a crash, which is not "consistent". The mode is
 * reported as the {@code processing_mode} tag of the {@code flow.computation.guarantee} gauge and
 * logged when a pipeline starts.
 */
public enum ProcessingMode {
    /** Default: every input affects state and outputs exactly once. */
    EXACTLY_ONCE("exactly_once"),
    /**
     * Flow's relaxed mode for Transform computations ("input message deduplication by message_id is
     * disabled [...] state remains consistent"); on Kafka it runs on {@code exactly_once_v2} and
     * behaves exactly as {@link #EXACTLY_ONCE}, which is stronger than it promises.
     */
    AT_LEAST_ONCE_CONSISTENT("at_least_once_consistent");

    private final String specName;

    ProcessingMode(String specName) {
        this.specName = specName;
    }

    /**
     * The name used in specs.
     *
     * @return the spec name, e.g. {@code exactly_once}
     */
    public String specName() {
        return specName;
    }

    /**
     * Parses a spec name; throws IllegalArgumentException naming the accepted values.
     *
     * @param name a spec name, case-insensitive, such as {@code exactly_once}
     * @return the mode
     */
    public static ProcessingMode parse(String name) {
        for (ProcessingMode m : values()) {
            if (m.specName.equals(name.trim().toLowerCase(Locale.ROOT))) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown processing_mode '" + name
                + "': use exactly_once or at_least_once_consistent");
    }
}
