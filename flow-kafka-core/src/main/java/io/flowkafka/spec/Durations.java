package io.flowkafka.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses Flow-style durations: {@code "1m"}, {@code "30s"}, {@code "500ms"}, {@code "2h"},
 * {@code "1d"}, or a number of milliseconds; the spec uses it for every duration field, and process
 * functions may use it for duration parameters ({@link io.flowkafka.api.RuntimeContext#getParameters()}).
 */
public final class Durations {
    private static final Pattern PATTERN = Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|h|d)?\\s*");

    private Durations() {
    }

    static Duration parse(JsonNode node, String field) {
        if (node.isNumber()) {
            return parse(node.numberValue(), field);
        }
        return parse(node.asText(), field);
    }

    /**
     * Parses a duration value as the spec holds it: a {@link Duration}, a {@link Number} of
     * milliseconds, or a string like {@code "7d"} (a number without a unit is milliseconds).
     *
     * @param value the value: a {@link Duration}, a {@link Number} of milliseconds or a string
     * @param field the field or parameter, for the error message
     * @return the duration, positive or zero
     * @throws IllegalArgumentException naming the field when the value is null, malformed, negative or longer
     *     than 2^63-1 nanoseconds (about 292 years)
     */
    public static Duration parse(Object value, String field) {
        if (value instanceof Duration d) {
            return d;
        }
        if (value instanceof Number n) {
            if (n.doubleValue() < 0) {
                throw negative(field, n.toString());
            }
            if (!(n.doubleValue() * 1e6 < Long.MAX_VALUE)) {
                throw tooLong(field, n.toString());
            }
            return Duration.ofMillis(n.longValue());
        }
        if (value == null) {
            throw new IllegalArgumentException(field + " must be a duration like \"1m\", \"30s\" or \"500ms\" but is missing");
        }
        return parse(value.toString(), field);
    }

    /**
     * Parses a duration string; throws IllegalArgumentException naming the field (also for a negative one, or one
     * longer than 2^63-1 nanoseconds).
     *
     * @param text a number with an optional unit ({@code ns}, {@code us}, {@code ms}, {@code s},
     *     {@code m}, {@code h} or {@code d}), such as {@code "7d"}; without a unit, milliseconds
     * @param field the field or parameter, for the error message
     * @return the duration, positive or zero
     */
    public static Duration parse(String text, String field) {
        Matcher m = PATTERN.matcher(text);
        String trimmed = text.trim();
        if (!m.matches() && trimmed.startsWith("-") && PATTERN.matcher(trimmed.substring(1)).matches()) {
            throw negative(field, text);
        }
        if (!m.matches()) {
            throw new IllegalArgumentException(field + " must be a duration like \"1m\", \"30s\" or \"500ms\" but was '"
                    + text + "'");
        }
        double v = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        double nanos = switch (unit) {
            case "ns" -> v;
            case "us" -> v * 1e3;
            case "ms" -> v * 1e6;
            case "s" -> v * 1e9;
            case "m" -> v * 60e9;
            case "h" -> v * 3600e9;
            default -> v * 86400e9;
        };
        if (!(nanos < Long.MAX_VALUE)) {
            throw tooLong(field, text);
        }
        return Duration.ofNanos((long) nanos);
    }

    /** Longer than a long of nanoseconds holds: it would be cut to 292 years (or wrap) without a word. */
    private static IllegalArgumentException tooLong(String field, String text) {
        return new IllegalArgumentException(field + " must be at most 292 years (2^63-1 ns) but was '" + text
                + "': write a shorter duration like \"1m\", \"30s\" or \"7d\"");
    }

    private static IllegalArgumentException negative(String field, String text) {
        return new IllegalArgumentException(field + " must be positive but was '" + text + "': write a duration like "
                + "\"1m\", \"30s\" or \"500ms\"");
    }
}
