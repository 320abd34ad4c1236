package io.flowkafka.spec;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The dynamic settings of a key-visitor stream (Flow's
 * {@code dynamic_spec.computations.<id>.key_visitor_streams.<name>}), changeable on a running
 * pipeline through {@link io.flowkafka.runtime.FlowRuntime#reconfigure}. Immutable.
 *
 * @param period the target duration of one full pass (default 1 day)
 * @param maxScanRowsPerIteration at most this many state rows per read; must exceed the number of
 *     states of any key, or the scan stalls (default 1000)
 * @param bufferRowLimit at most this many ready visits per read (default 1000)
 * @param finite whether the visitor follows its upstream streams to completion (default true)
 * @param fullFinalPass whether the final pass is a complete one begun after completion (default true)
 * @param backgroundFillPeriod the pause between reads when idle (default 500 ms)
 */
public record KeyVisitorSettings(Duration period, int maxScanRowsPerIteration, int bufferRowLimit, boolean finite,
        boolean fullFinalPass, Duration backgroundFillPeriod) {
    /** The names of the dynamic settings, as in Flow's dynamic spec. */
    public static final List<String> NAMES = List.of("period", "max_scan_rows_per_iteration", "buffer_row_limit",
            "finite", "full_final_pass", "background_fill_period");

    /** Flow's defaults. */
    public static final KeyVisitorSettings DEFAULTS = new KeyVisitorSettings(Duration.ofDays(1), 1000, 1000, true, true,
            Duration.ofMillis(500));

    /**
     * Validates the settings.
     *
     * @param period the target duration of one full pass; positive
     * @param maxScanRowsPerIteration at most this many state rows per read; at least 1
     * @param bufferRowLimit at most this many ready visits per read; at least 1
     * @param finite whether the visitor follows its upstream streams to completion
     * @param fullFinalPass whether the final pass is a complete one begun after completion
     * @param backgroundFillPeriod the pause between reads when idle; positive
     * @throws IllegalArgumentException naming the setting for a value out of range
     */
    public KeyVisitorSettings {
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive but was " + period);
        }
        if (maxScanRowsPerIteration < 1) {
            throw new IllegalArgumentException("max_scan_rows_per_iteration must be >= 1 but was " + maxScanRowsPerIteration);
        }
        if (bufferRowLimit < 1) {
            throw new IllegalArgumentException("buffer_row_limit must be >= 1 but was " + bufferRowLimit);
        }
        if (backgroundFillPeriod.isNegative() || backgroundFillPeriod.isZero()) {
            throw new IllegalArgumentException("background_fill_period must be positive but was " + backgroundFillPeriod);
        }
    }

    /**
     * A copy with {@code changes} applied (names from {@link #NAMES}; durations as strings like
     * {@code "1h"}, {@link Duration}s or milliseconds).
     *
     * @param changes the settings to change, by name; settings not named keep their value
     * @param field the spec path of the settings, for error messages
     * @return the copy
     * @throws IllegalArgumentException naming the field for an unknown name or a bad value
     */
    public KeyVisitorSettings with(Map<String, ?> changes, String field) {
        Duration p = period;
        int rows = maxScanRowsPerIteration;
        int buffer = bufferRowLimit;
        boolean fin = finite;
        boolean full = fullFinalPass;
        Duration fill = backgroundFillPeriod;
        for (Map.Entry<String, ?> e : changes.entrySet()) {
            String f = field + "." + e.getKey();
            Object v = e.getValue();
            switch (e.getKey()) {
                case "period" -> p = positive(duration(v, f), f);
                case "max_scan_rows_per_iteration" -> rows = positiveInt(v, f);
                case "buffer_row_limit" -> buffer = positiveInt(v, f);
                case "finite" -> fin = bool(v, f);
                case "full_final_pass" -> full = bool(v, f);
                case "background_fill_period" -> fill = positive(duration(v, f), f);
                default -> throw new IllegalArgumentException(f + " is not a dynamic key-visitor setting; use one of "
                        + NAMES);
            }
        }
        return new KeyVisitorSettings(p, rows, buffer, fin, full, fill);
    }

    private static Duration duration(Object v, String field) {
        if (v instanceof Duration d) {
            return d;
        }
        if (v instanceof Number) {
            return Durations.parse(v, field); // milliseconds, checked for range
        }
        return Durations.parse(String.valueOf(v), field);
    }

    private static Duration positive(Duration d, String field) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(field + " must be a positive duration but was " + d);
        }
        return d;
    }

    private static int positiveInt(Object v, String field) {
        try {
            long n = v instanceof Number num ? num.longValue() : Long.parseLong(String.valueOf(v).trim());
            boolean whole = !(v instanceof Double || v instanceof Float) || ((Number) v).doubleValue() == n;
            if (whole && n >= 1 && n <= Integer.MAX_VALUE) {
                return (int) n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(field + " must be a positive integer but was " + v);
    }

    private static boolean bool(Object v, String field) {
        if (v instanceof Boolean b) {
            return b;
        }
        String s = String.valueOf(v).trim();
        if (s.equals("true") || s.equals("%true")) {
            return true;
        }
        if (s.equals("false") || s.equals("%false")) {
            return false;
        }
        throw new IllegalArgumentException(field + " must be true or false but was " + v);
    }
}
