package io.flowkafka.spec;

import java.util.Locale;

/** The kind of a computation, with Flow's class names and short names. */
public enum ComputationKind {
    /** Materialized output; state, timers, key visitors, sinks. */
    TRANSFORM("Transform", "TProcessFunctionComputation"),
    /** Deterministic, nothing materialized between epochs, no sources, sinks or timers. */
    SWIFT_MAP("SwiftMap", "TProcessFunctionSwiftMapComputation"),
    /** Exactly one ordered source. */
    SOURCE("Source", "TProcessFunctionSourceComputation"),
    /** One ordered source, materialized output, state keyed by source partition. */
    TRANSFORM_ORDERED_SOURCE("TransformOrderedSource", "TProcessFunctionTransformOrderedSourceComputation");

    private final String shortName;
    private final String flowClassName;

    ComputationKind(String shortName, String flowClassName) {
        this.shortName = shortName;
        this.flowClassName = flowClassName;
    }

    /**
     * The short name used in specs.
     *
     * @return the short name, e.g. {@code Transform}
     */
    public String shortName() {
        return shortName;
    }

    /**
     * Flow's {@code computation_class_name}.
     *
     * @return the class name, e.g. {@code TProcessFunctionComputation}
     */
    public String flowClassName() {
        return flowClassName;
    }

    /**
     * Parses a short name or a Flow class name (case-insensitive; {@code swift_map} also works).
     *
     * @param name a short name or a Flow class name
     * @return the kind
     * @throws IllegalArgumentException naming the accepted values if none matches
     */
    public static ComputationKind parse(String name) {
        String n = name.trim().replace("_", "").toLowerCase(Locale.ROOT);
        for (ComputationKind k : values()) {
            if (k.shortName.toLowerCase(Locale.ROOT).equals(n) || k.flowClassName.toLowerCase(Locale.ROOT).equals(n)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown computation kind '" + name
                + "': use one of Transform, SwiftMap, Source, TransformOrderedSource (or Flow's class names)");
    }
}
