package io.flowkafka.connectors.http;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The secret header values of one sink, read when a partition opens, and the redaction of any text that may leave
 * the sink (log lines, status errors, dead-letter headers): it owns the rule that a secret never appears outside the
 * request it authorises, even when the target echoes it back in a response body.
 */
final class SecretValues {
    private final Map<String, String> values;

    private SecretValues(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Reads every secret now.
     *
     * @param secrets the sink's {@code secret_headers}
     * @return the values by header name
     * @throws IllegalStateException naming where a missing secret should be (not its value)
     */
    static SecretValues read(List<SecretHeader> secrets) {
        Map<String, String> v = new LinkedHashMap<>();
        for (SecretHeader s : secrets) {
            v.put(s.header(), s.read());
        }
        return new SecretValues(v);
    }

    /**
     * The values by header name, to set on requests only.
     *
     * @return header name to secret value
     */
    Map<String, String> headers() {
        return values;
    }

    /**
     * The text with every secret value replaced by {@code <secret header NAME>}.
     *
     * @param text any text about a request or its response, or null
     * @return the redacted text ("" for null)
     */
    String redact(@Nullable String text) {
        if (text == null) {
            return "";
        }
        String out = text;
        for (Map.Entry<String, String> e : values.entrySet()) {
            out = out.replace(e.getValue(), "<secret header " + e.getKey() + ">");
        }
        return out;
    }
}
