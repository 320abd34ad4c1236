package io.flowkafka.spec;

import java.math.BigDecimal;
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

    /**
     * A key-visitor stream from its spec fields.
     *
     * @param id the visitor stream id
     * @param parameters its settings, as in a spec file
     */
    public KeyVisitorStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }

    /**
     * A typed builder for a key-visitor stream: the same spec as
     * {@code new KeyVisitorStreamSpec(id, parameters)} with the parameters a spec file would give
     * (durations in milliseconds). E.g.
     * {@code KeyVisitorStreamSpec.builder("ttl").names("total").period(Duration.ofHours(1)).build()}.
     *
     * @param id the visitor stream id
     * @return a builder with no parameter set (every setting at its default)
     */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    /**
     * Builds a {@link KeyVisitorStreamSpec} with typed setters; each sets one parameter under its
     * spec name. Nothing is checked before {@link PipelineSpec#validate()}.
     */
    public static final class Builder {
        private final String id;
        private final Map<String, Object> parameters = new java.util.LinkedHashMap<>();

        private Builder(String id) {
            this.id = Objects.requireNonNull(id, "id");
        }

        /**
         * {@code names}: appends internal states whose keys are visited (default: every state).
         *
         * @param states state names of the computation
         * @return this builder
         */
        public Builder names(String... states) {
            return append("names", states);
        }

        /**
         * {@code external_names}: appends external state managers and joiners whose keys are visited
         * too.
         *
         * @param names external state names
         * @return this builder
         */
        public Builder externalNames(String... names) {
            return append("external_names", names);
        }

        /**
         * {@code upstream_streams}: appends inputs and sources whose completion starts the final pass
         * (default: every input and source stream).
         *
         * @param streamIds stream ids
         * @return this builder
         */
        public Builder upstreamStreams(String... streamIds) {
            return append("upstream_streams", streamIds);
        }

        /**
         * {@code bucket_count}: how many hash buckets a partition's key range is split into, scanned
         * round-robin (default {@value KeyVisitorStreamSpec#DEFAULT_BUCKET_COUNT}; 1 to 4096).
         *
         * @param count the bucket count
         * @return this builder
         */
        public Builder bucketCount(int count) {
            parameters.put("bucket_count", count);
            return this;
        }

        /**
         * Dynamic {@code period}: the target duration of one full pass (default 1 day).
         *
         * @param period a positive duration; stored in milliseconds
         * @return this builder
         */
        public Builder period(java.time.Duration period) {
            parameters.put("period", Objects.requireNonNull(period, "period").toMillis());
            return this;
        }

        /**
         * Dynamic {@code max_scan_rows_per_iteration}: at most this many state rows per read; must
         * exceed the number of states of any key (default 1000).
         *
         * @param rows a positive row count
         * @return this builder
         */
        public Builder maxScanRowsPerIteration(int rows) {
            parameters.put("max_scan_rows_per_iteration", rows);
            return this;
        }

        /**
         * Dynamic {@code buffer_row_limit}: at most this many ready visits per read (default 1000).
         *
         * @param rows a positive row count
         * @return this builder
         */
        public Builder bufferRowLimit(int rows) {
            parameters.put("buffer_row_limit", rows);
            return this;
        }

        /**
         * Dynamic {@code finite}: whether the visitor follows its upstream streams to completion
         * (default true).
         *
         * @param finite false for a visitor that never completes
         * @return this builder
         */
        public Builder finite(boolean finite) {
            parameters.put("finite", finite);
            return this;
        }

        /**
         * Dynamic {@code full_final_pass}: whether the final pass is a complete one begun after
         * completion (default true).
         *
         * @param full false to end with the pass under way at completion
         * @return this builder
         */
        public Builder fullFinalPass(boolean full) {
            parameters.put("full_final_pass", full);
            return this;
        }

        /**
         * Dynamic {@code background_fill_period}: the pause between reads when idle (default 500 ms).
         *
         * @param period a positive duration; stored in milliseconds
         * @return this builder
         */
        public Builder backgroundFillPeriod(java.time.Duration period) {
            parameters.put("background_fill_period", Objects.requireNonNull(period, "period").toMillis());
            return this;
        }

        /**
         * Builds the visitor stream; the builder stays usable.
         *
         * @return the visitor stream, with the parameters set so far
         */
        public KeyVisitorStreamSpec build() {
            Map<String, Object> out = new java.util.LinkedHashMap<>(parameters);
            out.replaceAll((k, v) -> v instanceof List<?> l ? List.copyOf(l) : v);
            return new KeyVisitorStreamSpec(id, out);
        }

        @SuppressWarnings("unchecked")
        private Builder append(String name, String... values) {
            ((List<String>) parameters.computeIfAbsent(name, k -> new ArrayList<String>())).addAll(List.of(values));
            return this;
        }
    }

    /**
     * {@code names}: the internal states to visit keys of; empty means all states (unless only
     * {@code external_names} is given, see {@link #scansInternalStates()}).
     *
     * @return the state names, in the order given; empty when unset
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public List<String> names() {
        return stringList("names");
    }

    /**
     * {@code external_names}: external state managers and joiners whose keys are visited too.
     *
     * @return the names, in the order given; empty when unset
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public List<String> externalNames() {
        return stringList("external_names");
    }

    /**
     * Whether internal states are scanned: unless only {@code external_names} is given.
     *
     * @return false only when {@code external_names} is given and {@code names} is not
     */
    public boolean scansInternalStates() {
        return !names().isEmpty() || externalNames().isEmpty();
    }

    /**
     * {@code upstream_streams}: the streams followed to completion; null when unset (then every
     * input and source stream).
     *
     * @return the stream ids, in the order given; null when unset
     * @throws IllegalArgumentException if it is not a list of strings
     */
    public @Nullable List<String> upstreamStreams() {
        return parameters.containsKey("upstream_streams") ? stringList("upstream_streams") : null;
    }

    /**
     * {@code bucket_count}, default {@value #DEFAULT_BUCKET_COUNT}.
     *
     * @return the number of buckets, from 1 to 4096
     * @throws IllegalArgumentException if it is not a positive integer up to 4096
     */
    public int bucketCount() {
        Object v = parameters.get("bucket_count");
        if (v == null) {
            return DEFAULT_BUCKET_COUNT;
        }
        int n;
        try {
            // exact: 16.7 must not become 16, nor a long past the int range wrap around
            n = new BigDecimal(v.toString().trim()).intValueExact();
        } catch (NumberFormatException | ArithmeticException e) {
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
     * @return the settings the key visitor starts with
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

    /**
     * The known parameter names, static and dynamic.
     *
     * @return a new, modifiable list of the parameter names of a key visitor stream
     */
    public static List<String> knownParameters() {
        List<String> out = new ArrayList<>(List.of("names", "external_names", "upstream_streams", "bucket_count"));
        out.addAll(KeyVisitorSettings.NAMES);
        return out;
    }
}
