package io.flowkafka.internal.skip;

import io.flowkafka.api.MessageId;
import java.util.Arrays;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.util.Utf8;
import org.jspecify.annotations.Nullable;

/**
 * How two values of a {@code skip_if_expression} compare; the one home of its type rules. Numbers compare
 * numerically across int, long, float and double (a float against a decimal at float precision); strings, Avro
 * {@link Utf8} and enum symbols compare as text in Unicode code point order; booleans with booleans; message ids with
 * message ids (as unsigned bytes) or with their hexadecimal text. Anything else, and null, is {@link #INCOMPARABLE}:
 * every comparison with it is false. Allocates nothing for these types (an Avro {@link Utf8} compared with a Java
 * string decodes itself once, as Avro does).
 */
final class Values {
    /** The result of comparing values that do not compare: every relation is false. */
    static final int INCOMPARABLE = Integer.MIN_VALUE;

    private Values() {
    }

    /** Negative, zero or positive as {@code a} is below, equal to or above {@code b}; or {@link #INCOMPARABLE}. */
    static int compare(@Nullable Object a, @Nullable Object b) {
        if (a == null || b == null) {
            return INCOMPARABLE;
        }
        Object x = a instanceof GenericEnumSymbol<?> ? a.toString() : a;
        Object y = b instanceof GenericEnumSymbol<?> ? b.toString() : b;
        if (x instanceof Number n && y instanceof Number m) {
            return compareNumbers(n, m);
        }
        if (x instanceof CharSequence s && y instanceof CharSequence t) {
            return compareText(s, t);
        }
        if (x instanceof Boolean p && y instanceof Boolean q) {
            return Boolean.compare(p, q);
        }
        if (x instanceof MessageId i && y instanceof MessageId j) {
            return Integer.signum(i.compareTo(j));
        }
        if (x instanceof MessageId i && y instanceof CharSequence t) {
            return compareText(i.toString(), t);
        }
        if (x instanceof CharSequence s && y instanceof MessageId j) {
            return compareText(s, j.toString());
        }
        return INCOMPARABLE;
    }

    private static boolean integral(Number n) {
        return n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte;
    }

    private static int compareNumbers(Number x, Number y) {
        boolean xi = integral(x);
        boolean yi = integral(y);
        if (xi && yi) {
            return Long.compare(x.longValue(), y.longValue());
        }
        if (!xi && !yi && (x instanceof Float || y instanceof Float)) {
            float fx = x.floatValue();
            float fy = y.floatValue();
            return Float.isNaN(fx) || Float.isNaN(fy) ? INCOMPARABLE : fx < fy ? -1 : fx > fy ? 1 : 0;
        }
        double dx = x.doubleValue();
        double dy = y.doubleValue();
        if (Double.isNaN(dx) || Double.isNaN(dy)) {
            return INCOMPARABLE;
        }
        if (xi) {
            return compareLongWithDouble(x.longValue(), dy);
        }
        if (yi) {
            return -compareLongWithDouble(y.longValue(), dx);
        }
        return dx < dy ? -1 : dx > dy ? 1 : 0;
    }

    /** Exact, where a conversion of the long to double would round above 2^53. */
    private static int compareLongWithDouble(long l, double d) {
        if (d >= 0x1p63) {
            return -1;
        }
        if (d < -0x1p63) {
            return 1;
        }
        double floor = Math.floor(d);
        long f = (long) floor;
        if (l != f) {
            return Long.compare(l, f);
        }
        return floor == d ? 0 : -1;
    }

    /** Code point order, which is the order of the UTF-8 bytes: two {@link Utf8} compare without decoding. */
    static int compareText(CharSequence a, CharSequence b) {
        if (a instanceof Utf8 u && b instanceof Utf8 v) {
            int c = Arrays.compareUnsigned(u.getBytes(), 0, u.getByteLength(), v.getBytes(), 0, v.getByteLength());
            return Integer.signum(c);
        }
        CharSequence x = a instanceof Utf8 ? a.toString() : a; // decoded once and kept by the Utf8
        CharSequence y = b instanceof Utf8 ? b.toString() : b;
        int n = x.length();
        int m = y.length();
        int i = 0;
        int j = 0;
        while (i < n && j < m) {
            int ca = Character.codePointAt(x, i);
            int cb = Character.codePointAt(y, j);
            if (ca != cb) {
                return ca < cb ? -1 : 1;
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return i < n ? 1 : j < m ? -1 : 0;
    }
}
