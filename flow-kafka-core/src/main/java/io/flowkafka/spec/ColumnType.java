package io.flowkafka.spec;

import java.util.Locale;

/** The type of a {@code group_by_schema} column, with YTsaurus' type names. */
public enum ColumnType {
    /** {@code uint64}. */ UINT64, /** {@code int64}. */ INT64, /** {@code double}. */ DOUBLE, /** {@code boolean}. */ BOOLEAN, /** {@code string} (or {@code utf8}). */ STRING;

    /**
     * The YTsaurus name.
     *
     * @return the lower-case name, e.g. {@code uint64}
     */
    public String specName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a YTsaurus type name; throws IllegalArgumentException naming the accepted values.
     *
     * @param name a type name, case-insensitive; {@code utf8} is taken as {@link #STRING}
     * @return the column type
     */
    public static ColumnType parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        if (n.equals("utf8")) {
            return STRING;
        }
        for (ColumnType t : values()) {
            if (t.specName().equals(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown column type '" + name
                + "': use uint64, int64, double, boolean or string");
    }
}
