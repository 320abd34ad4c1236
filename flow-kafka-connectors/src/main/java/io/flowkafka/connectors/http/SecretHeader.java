package io.flowkafka.connectors.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One {@code secret_headers} entry: an HTTP header whose value is read from an environment variable
 * ({@code {env: NAME}}) or a file ({@code {file: /path}}, trailing line breaks removed) instead of the spec. It owns
 * the rule that the spec names only where a secret is, never the secret itself.
 *
 * @param header the HTTP header name
 * @param env the environment variable holding the value, or null
 * @param file the file holding the value, or null; exactly one of {@code env} and {@code file} is set
 */
record SecretHeader(String header, @Nullable String env, @Nullable Path file) {

    /**
     * Reads one {@code secret_headers} entry.
     *
     * @param header the header name
     * @param source the entry's value: a map with one key, {@code env} or {@code file}
     * @return the entry
     * @throws IllegalArgumentException saying what is wrong with {@code source}
     */
    static SecretHeader of(String header, @Nullable Object source) {
        if (!(source instanceof Map<?, ?> m) || m.size() != 1) {
            throw new IllegalArgumentException("secret header '" + header + "' must be a map with one key, env or "
                    + "file, but was " + (source instanceof Map<?, ?> ? "a map with keys " + ((Map<?, ?>) source).keySet()
                    : "not a map"));
        }
        Map.Entry<?, ?> e = m.entrySet().iterator().next();
        String kind = String.valueOf(e.getKey());
        String where = String.valueOf(e.getValue());
        if (where.isBlank()) {
            throw new IllegalArgumentException("secret header '" + header + "' has an empty " + kind);
        }
        return switch (kind) {
            case "env" -> new SecretHeader(header, where, null);
            case "file" -> new SecretHeader(header, null, Path.of(where));
            default -> throw new IllegalArgumentException("secret header '" + header + "' has the unknown source '"
                    + kind + "'");
        };
    }

    /**
     * Where the value comes from, for messages (never the value).
     *
     * @return e.g. {@code environment variable API_TOKEN}
     */
    String where() {
        return env != null ? "environment variable " + env : "file " + file;
    }

    /**
     * Reads the secret value now.
     *
     * @return the value, without trailing line breaks
     * @throws IllegalStateException naming where the value should be (not the value) when it is missing
     */
    String read() {
        if (env != null) {
            String v = System.getenv(env);
            if (v == null || v.isEmpty()) {
                throw new IllegalStateException("secret header '" + header + "': " + where() + " is not set");
            }
            return v;
        }
        try {
            String v = Files.readString(file, StandardCharsets.UTF_8).replaceAll("[\\r\\n]+$", "");
            if (v.isEmpty()) {
                throw new IllegalStateException("secret header '" + header + "': " + where() + " is empty");
            }
            return v;
        } catch (IOException e) {
            throw new IllegalStateException("secret header '" + header + "': " + where() + " cannot be read: "
                    + e.getClass().getSimpleName());
        }
    }
}
