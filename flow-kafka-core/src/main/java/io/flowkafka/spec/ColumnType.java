package io.flowkafka.spec;

import java.util.Locale;

/** The type of a {@code group_by_schema} column, with YTsaurus' type names. */
public enum ColumnType {
    UINT64, INT64, DOUBLE, BOOLEAN, STRING;

    /** The YTsaurus name, e.g. {@code uint64}. */
    public String specName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a YTsaurus type name; throws IllegalArgumentException naming the accepted values. */
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
