package io.flowkafka.spec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A key-visitor stream of a computation ({@code key_visitor_streams.<id>}), with Flow's settings
 * as typed accessors over its parameters.
 *
 * <p>Static settings: {@code names} (the internal states whose keys are visited; default all),
 * {@code external_names} (external state managers and joiners to scan as well),
 * {@code upstream_streams} (the inputs and sources whose completion starts the final pass;
 * default all), {@code bucket_count} (how many hash buckets a partition's range is split into,
 * scanned round-robin; default 16). Dynamic settings ({@link KeyVisitorSettings}) may also be
 * given here as their starting values and changed later through
 * {@link io.flowkafka.runtime.FlowRuntime#reconfigure}.
 *
 * @param id the visitor stream id
 * @param parameters its settings
 */
public record KeyVisitorStreamSpec(String id, Map<String, Object> parameters) {
    /** The default {@code bucket_count}. */
    public static final int DEFAULT_BUCKET_COUNT = 16;

    public KeyVisitorStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }

    /**
     * {@code names}: the internal states to visit keys of; empty means all states (unless only
     * {@code external_names} is given, see {@link #scansInternalStates()}).
     *
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public List<String> names() {
        return stringList("names");
    }

    /**
     * {@code external_names}: external state managers and joiners whose keys are visited too.
     *
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public List<String> externalNames() {
        return stringList("external_names");
    }

    /** Whether internal states are scanned: unless only {@code external_names} is given. */
    public boolean scansInternalStates() {
        return !names().isEmpty() || externalNames().isEmpty();
    }

    /**
     * {@code upstream_streams}: the streams followed to completion; null when unset (then every
     * input and source stream).
     *
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public @Nullable List<String> upstreamStreams() {
        return parameters.containsKey("upstream_streams") ? stringList("upstream_streams") : null;
    }

    /**
     * {@code bucket_count}, default {@value #DEFAULT_BUCKET_COUNT}.
     *
     * @throws IllegalArgumentException if it is not a positive integer up to 4096
     */
    public int bucketCount() {
        Object v = parameters.get("bucket_count");
        if (v == null) {
            return DEFAULT_BUCKET_COUNT;
        }
        int n;
        try {
            n = v instanceof Number num ? num.intValue() : Integer.parseInt(v.toString().trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > 4096) {
            throw new IllegalArgumentException("key_visitor_streams." + id + ".bucket_count must be an integer from 1 "
                    + "to 4096 but was " + v);
        }
        return n;
    }

    /**
     * The starting dynamic settings: the defaults overridden by any dynamic setting given here.
     *
     * @throws IllegalArgumentException for a malformed value
     */
    public KeyVisitorSettings settings() {
        Map<String, Object> dynamic = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, Object> e : parameters.entrySet()) {
            if (KeyVisitorSettings.NAMES.contains(e.getKey())) {
                dynamic.put(e.getKey(), e.getValue());
            }
        }
        return KeyVisitorSettings.DEFAULTS.with(dynamic, "key_visitor_streams." + id);
    }

    private List<String> stringList(String name) {
        Object v = parameters.get(name);
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof Collection<?> c)) {
            throw new IllegalArgumentException("key_visitor_streams." + id + "." + name + " must be a list of names but was "
                    + v);
        }
        List<String> out = new ArrayList<>();
        for (Object o : c) {
            if (!(o instanceof String s) || s.isBlank()) {
                throw new IllegalArgumentException("key_visitor_streams." + id + "." + name
                        + " must be a list of non-empty names but holds " + o);
            }
            out.add(s);
        }
        return List.copyOf(out);
    }

    /** The known parameter names, static and dynamic. */
    public static List<String> knownParameters() {
        List<String> out = new ArrayList<>(List.of("names", "external_names", "upstream_streams", "bucket_count"));
        out.addAll(KeyVisitorSettings.NAMES);
        return out;
    }
}
