package io.flowkafka.internal.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A Kafka source's {@code partition_filter}: the partition numbers whose records it processes.
 *
 * <p>Syntax: a list whose items are partition numbers or inclusive ranges {@code "a-b"}, e.g.
 * {@code [0, 1, "4-7"]}, or the same as one comma-separated string, {@code "0,1,4-7"}. Numbers
 * are non-negative; a range needs {@code a <= b}; the filter names at least one partition. The
 * filter applies to every topic of the source.
 *
 * <p>Immutable and thread-safe.
 */
public final class PartitionFilter {
    private final List<long[]> ranges;

    private PartitionFilter(List<long[]> ranges) {
        this.ranges = ranges;
    }

    /**
     * Parses a {@code partition_filter} value.
     *
     * @throws IllegalArgumentException naming the offending item and the expected syntax
     */
    public static PartitionFilter parse(Object value) {
        Objects.requireNonNull(value, "value");
        List<Object> items = new ArrayList<>();
        if (value instanceof Collection<?> c) {
            items.addAll(c);
        } else if (value instanceof CharSequence s) {
            for (String part : s.toString().split(",", -1)) {
                items.add(part);
            }
        } else if (value instanceof Number) {
            items.add(value);
        } else {
            throw new IllegalArgumentException("partition_filter must be a list of partition numbers and ranges "
                    + "like [0, 1, \"4-7\"] or a string like \"0,1,4-7\", but was " + value);
        }
        if (items.isEmpty()) {
            throw new IllegalArgumentException("partition_filter is empty, so the source would skip every record");
        }
        List<long[]> ranges = new ArrayList<>();
        for (Object item : items) {
            ranges.add(range(item));
        }
        ranges.sort(Comparator.comparingLong(r -> r[0]));
        List<long[]> merged = new ArrayList<>();
        for (long[] r : ranges) {
            long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && r[0] <= last[1] + 1) {
                last[1] = Math.max(last[1], r[1]);
            } else {
                merged.add(new long[] {r[0], r[1]});
            }
        }
        return new PartitionFilter(List.copyOf(merged));
    }

    private static long[] range(Object item) {
        if (item instanceof Number n) {
            if (n instanceof Double || n instanceof Float || n.longValue() < 0 || n.longValue() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("partition_filter item " + item + " is not a partition number "
                        + "(an integer from 0 to " + Integer.MAX_VALUE + ")");
            }
            return new long[] {n.longValue(), n.longValue()};
        }
        if (!(item instanceof CharSequence cs)) {
            throw new IllegalArgumentException("partition_filter item " + item + " is neither a partition number nor "
                    + "a range like \"4-7\"");
        }
        String s = cs.toString().strip();
        int dash = s.indexOf('-', 1);
        try {
            if (dash < 0) {
                long p = number(s);
                return new long[] {p, p};
            }
            long from = number(s.substring(0, dash).strip());
            long to = number(s.substring(dash + 1).strip());
            if (from > to) {
                throw new IllegalArgumentException("partition_filter range \"" + s + "\" ends before it starts; "
                        + "write it as \"" + to + "-" + from + "\"");
            }
            return new long[] {from, to};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("partition_filter item \"" + s + "\" is neither a partition number nor "
                    + "a range like \"4-7\"");
        }
    }

    private static long number(String s) {
        long p = Long.parseLong(s);
        if (p < 0 || p > Integer.MAX_VALUE) {
            throw new NumberFormatException(s);
        }
        return p;
    }

    /** Whether records of {@code partition} are processed. */
    public boolean accepts(int partition) {
        for (long[] r : ranges) {
            if (partition < r[0]) {
                return false;
            }
            if (partition <= r[1]) {
                return true;
            }
        }
        return false;
    }

    /** The canonical form, e.g. {@code 0-1,4-7}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (long[] r : ranges) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(r[0]);
            if (r[1] != r[0]) {
                b.append('-').append(r[1]);
            }
        }
        return b.toString();
    }
}
