package io.flowkafka.spec;

import java.util.Locale;

/**
 * A computation's {@code processing_mode}.
 *
 * <p>Both run on Kafka Streams' {@code exactly_once_v2}: on Kafka, the input dedup that
 * {@code at_least_once_consistent} exists to skip costs nothing extra, while Kafka Streams'
 * {@code at_least_once} would let state run ahead of committed offsets, which is not consistent.
 */
public enum ProcessingMode {
    /** Default: every input affects state and outputs exactly once. */
    EXACTLY_ONCE("exactly_once"),
    /** Flow's relaxed mode; on Kafka it has the same (stronger) behaviour as exactly_once. */
    AT_LEAST_ONCE_CONSISTENT("at_least_once_consistent");

    private final String specName;

    ProcessingMode(String specName) {
        this.specName = specName;
    }

    /** The name used in specs. */
    public String specName() {
        return specName;
    }

    /** Parses a spec name; throws IllegalArgumentException naming the accepted values. */
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
