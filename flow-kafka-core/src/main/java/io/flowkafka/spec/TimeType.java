package io.flowkafka.spec;

import java.util.Locale;

/** A timer stream's {@code time_type}: the scale its TriggerTimestamp is compared on. */
public enum TimeType {
    /** Compared with the EventWatermark of the watched streams (default). */
    EVENT_TIME,
    /** Compared with the SystemWatermark of the watched streams. */
    SYSTEM_TIME,
    /** Compared with wall-clock time; does not hold completion. */
    REAL_TIME;

    /**
     * The spec name.
     *
     * @return the lower-case name, e.g. {@code event_time}
     */
    public String specName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a spec name; throws IllegalArgumentException naming the accepted values.
     *
     * @param name a spec name, case-insensitive, such as {@code event_time}
     * @return the time type
     */
    public static TimeType parse(String name) {
        for (TimeType t : values()) {
            if (t.specName().equals(name.trim().toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown time_type '" + name + "': use event_time, system_time or real_time");
    }
}
