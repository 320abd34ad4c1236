package io.flowkafka.connectors.statictable;

import java.time.Instant;
import java.util.Objects;

/**
 * A table with the timestamp a {@link TableTimestampLocator} found for it.
 *
 * @param name the table name
 * @param timestamp its located timestamp
 */
public record LocatedTable(String name, Instant timestamp) {
    /**
     * Checks the fields.
     *
     * @param name the table name; not null
     * @param timestamp the timestamp; not null
     */
    public LocatedTable {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(timestamp, "timestamp");
    }
}
