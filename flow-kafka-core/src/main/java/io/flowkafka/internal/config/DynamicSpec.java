package io.flowkafka.internal.config;

import io.flowkafka.internal.skip.SkipExpression;
import io.flowkafka.internal.skip.SkipSetting;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.PipelineSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dynamic part of a pipeline's spec (Flow's {@code dynamic_spec}) held by one runtime: what a
 * running pipeline may change without restart: key-visitor settings and at-most-once queue limits. Tasks read it on
 * every punctuation, so a change takes effect at the next one.
 *
 * <p>Shape of a change, as in Flow: {@code {"computations": {"<id>": {"key_visitor_streams":
 * {"<name>": {"period": "1h"}}}}}}.
 *
 * <p>Threading: changed by any thread, read by stream threads; each value is immutable.
 */
public final class DynamicSpec {
    private final Map<String, KeyVisitorSettings> visitors = new ConcurrentHashMap<>();
    /** {@code at_most_once_strategy.total_queue_bytes_limit} of each at-most-once sink, by (computation, sink). */
    private final Map<String, Long> queueLimits = new ConcurrentHashMap<>();
    private final Map<String, ComputationSpec> computations;
    /** The dynamic parameters of punctuated sources, by (computation, stream), as last changed. */
    private final Map<String, Map<String, Object>> sourceParameters = new ConcurrentHashMap<>();
    /** {@code skip_if_expression} of every computation, by id; each task keeps its own and reads it per message. */
    private final Map<String, SkipSetting> skipIf = new LinkedHashMap<>();

    /** The starting values from the static spec (which must be valid). */
    public DynamicSpec(PipelineSpec spec) {
        this.computations = spec.computations();
        for (ComputationSpec c : spec.computations().values()) {
            skipIf.put(c.id(), SkipSetting.of(c, spec));
            for (KeyVisitorStreamSpec v : c.keyVisitorStreams().values()) {
                visitors.put(key(c.id(), v.id()), v.settings());
            }
            for (io.flowkafka.spec.SinkSpec sink : c.sinks()) {
                try {
                    io.flowkafka.spec.AtMostOnceStrategy amo = io.flowkafka.spec.AtMostOnceStrategy.of(sink);
                    if (amo.enabled()) {
                        queueLimits.put(key(c.id(), sink.id()), amo.totalQueueBytesLimit());
                    }
                } catch (IllegalArgumentException e) {
                    // the validator reports it
                }
            }
        }
    }

    private static String key(String computation, String visitor) {
        return computation + "\u0000" + visitor;
    }

    /** The current settings of a visitor stream. */
    public KeyVisitorSettings keyVisitor(String computation, String visitor) {
        KeyVisitorSettings s = visitors.get(key(computation, visitor));
        if (s == null) {
            throw new IllegalArgumentException("computation '" + computation + "' has no key-visitor stream '" + visitor + "'");
        }
        return s;
    }

    /**
     * The current parameters of a source: its static ones, overridden by those the dynamic spec changed
     * ({@code computations.<id>.source_streams.<stream>.<parameter>}).
     */
    public Map<String, Object> sourceParameters(String computation, io.flowkafka.spec.SourceSpec source) {
        Map<String, Object> changed = sourceParameters.get(key(computation, source.streamId()));
        if (changed == null) {
            return source.parameters();
        }
        Map<String, Object> out = new LinkedHashMap<>(source.parameters());
        out.putAll(changed);
        return java.util.Collections.unmodifiableMap(out);
    }

    /** The {@code skip_if_expression} setting of a computation, whose current value changes in place. */
    public SkipSetting skipIf(String computation) {
        SkipSetting s = skipIf.get(computation);
        if (s == null) {
            throw new IllegalArgumentException("the pipeline has no computation '" + computation + "'");
        }
        return s;
    }

    /** The current {@code total_queue_bytes_limit} of an at-most-once sink. */
    public long queueLimit(String computation, String sink) {
        Long l = queueLimits.get(key(computation, sink));
        if (l == null) {
            throw new IllegalArgumentException("computation '" + computation + "' has no at-most-once sink '" + sink + "'");
        }
        return l;
    }

    /**
     * Applies a change all at once, or nothing of it.
     *
     * @throws IllegalArgumentException listing every problem of the change
     */
    public synchronized void apply(Map<String, ?> change) {
        List<String> problems = new ArrayList<>();
        Map<String, KeyVisitorSettings> updates = new LinkedHashMap<>();
        Map<String, Long> queueUpdates = new LinkedHashMap<>();
        Map<String, Map<String, Object>> sourceUpdates = new LinkedHashMap<>();
        Map<String, SkipExpression> skipUpdates = new LinkedHashMap<>(); // a null value removes the expression
        for (Map.Entry<String, ?> top : change.entrySet()) {
            if (!top.getKey().equals("computations")) {
                problems.add("dynamic_spec." + top.getKey() + " is not a dynamic setting; use computations.<id>."
                        + "key_visitor_streams.<name>.<setting>");
                continue;
            }
            for (Map.Entry<String, ?> ce : map(top.getValue(), "dynamic_spec.computations", problems).entrySet()) {
                String cid = ce.getKey();
                String cfield = "dynamic_spec.computations." + cid;
                ComputationSpec c = computations.get(cid);
                if (c == null) {
                    problems.add(cfield + ": unknown computation '" + cid + "'; the pipeline has " + computations.keySet());
                    continue;
                }
                for (Map.Entry<String, ?> fe : map(ce.getValue(), cfield, problems).entrySet()) {
                    if (fe.getKey().equals("source_streams")) {
                        applySources(c, cfield + ".source_streams", map(fe.getValue(), cfield + ".source_streams",
                                problems), problems, sourceUpdates);
                        continue;
                    }
                    if (fe.getKey().equals("sinks")) {
                        applySinks(c, cfield + ".sinks", map(fe.getValue(), cfield + ".sinks", problems), problems,
                                queueUpdates);
                        continue;
                    }
                    if (fe.getKey().equals("skip_if_expression")) {
                        try {
                            skipUpdates.put(cid, skipIf.get(cid).compile(fe.getValue()));
                        } catch (IllegalArgumentException e) {
                            problems.add(cfield + "." + e.getMessage()); // the message starts with skip_if_expression
                        }
                        continue;
                    }
                    if (!fe.getKey().equals("key_visitor_streams")) {
                        problems.add(cfield + "." + fe.getKey() + " is not a dynamic setting; use key_visitor_streams,"
                                + " skip_if_expression or sinks.<sink>.at_most_once_strategy.total_queue_bytes_limit");
                        continue;
                    }
                    String vfield = cfield + ".key_visitor_streams";
                    for (Map.Entry<String, ?> ve : map(fe.getValue(), vfield, problems).entrySet()) {
                        String vid = ve.getKey();
                        if (!c.keyVisitorStreams().containsKey(vid)) {
                            problems.add(vfield + ": computation '" + cid + "' has no key-visitor stream '" + vid
                                    + "'; it has " + c.keyVisitorStreams().keySet());
                            continue;
                        }
                        String k = key(cid, vid);
                        KeyVisitorSettings base = updates.getOrDefault(k, visitors.get(k));
                        try {
                            updates.put(k, base.with(map(ve.getValue(), vfield + "." + vid, problems), vfield + "." + vid));
                        } catch (IllegalArgumentException e) {
                            problems.add(e.getMessage());
                        }
                    }
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the dynamic spec change was not applied: " + String.join("; ", problems));
        }
        visitors.putAll(updates);
        queueLimits.putAll(queueUpdates);
        sourceParameters.putAll(sourceUpdates);
        skipUpdates.forEach((cid, e) -> skipIf.get(cid).set(e));
    }

    private void applySources(ComputationSpec c, String field, Map<String, ?> sources, List<String> problems,
            Map<String, Map<String, Object>> updates) {
        for (Map.Entry<String, ?> se : sources.entrySet()) {
            String sfield = field + "." + se.getKey();
            io.flowkafka.spec.SourceSpec source = c.sourceStreams().stream()
                    .filter(s -> s.streamId().equals(se.getKey())).findFirst().orElse(null);
            io.flowkafka.spi.PunctuatedSource kind = source == null ? null
                    : io.flowkafka.internal.source.PunctuatedSources.of(source);
            java.util.Set<String> dynamic = kind == null ? java.util.Set.of() : kind.dynamicParameterNames();
            if (dynamic.isEmpty()) {
                problems.add(sfield + ": computation '" + c.id() + "' has no source stream '" + se.getKey()
                        + "' with dynamic parameters");
                continue;
            }
            String k = key(c.id(), source.streamId());
            Map<String, Object> merged = new LinkedHashMap<>(sourceParameters.getOrDefault(k, Map.of()));
            for (Map.Entry<String, ?> pe : map(se.getValue(), sfield, problems).entrySet()) {
                if (!dynamic.contains(pe.getKey())) {
                    problems.add(sfield + "." + pe.getKey() + " is not a dynamic parameter of "
                            + source.sourceClassName() + "; the dynamic ones are " + new java.util.TreeSet<>(dynamic));
                    continue;
                }
                merged.put(pe.getKey(), pe.getValue());
            }
            Map<String, Object> all = new LinkedHashMap<>(source.parameters());
            all.putAll(merged);
            io.flowkafka.spi.SourceProvider provider = io.flowkafka.internal.source.Sources.provider(
                    source.sourceClassName());
            if (provider != null) {
                for (io.flowkafka.spi.SourceProvider.Problem p : provider.validate(c, new io.flowkafka.spec.SourceSpec(
                        source.streamId(), source.sourceClassName(), all), null)) {
                    if (p.severity() == io.flowkafka.spec.SpecProblem.Severity.ERROR) {
                        problems.add(sfield + ": " + p.message() + "; fix: " + p.fix());
                    }
                }
            }
            updates.put(k, merged);
        }
    }

    private void applySinks(ComputationSpec c, String field, Map<String, ?> sinks, List<String> problems,
            Map<String, Long> queueUpdates) {
        for (Map.Entry<String, ?> se : sinks.entrySet()) {
            String sfield = field + "." + se.getKey();
            String k = key(c.id(), se.getKey());
            if (!queueLimits.containsKey(k)) {
                problems.add(sfield + ": computation '" + c.id() + "' has no sink '" + se.getKey()
                        + "' with at_most_once_strategy enabled; only its total_queue_bytes_limit is dynamic");
                continue;
            }
            for (Map.Entry<String, ?> fe : map(se.getValue(), sfield, problems).entrySet()) {
                if (!fe.getKey().equals("at_most_once_strategy")) {
                    problems.add(sfield + "." + fe.getKey() + " is not a dynamic setting; use "
                            + "at_most_once_strategy.total_queue_bytes_limit");
                    continue;
                }
                for (Map.Entry<String, ?> ae : map(fe.getValue(), sfield + ".at_most_once_strategy", problems).entrySet()) {
                    String afield = sfield + ".at_most_once_strategy." + ae.getKey();
                    if (!ae.getKey().equals("total_queue_bytes_limit")) {
                        problems.add(afield + " is not dynamic; only total_queue_bytes_limit is");
                        continue;
                    }
                    try {
                        queueUpdates.put(k, io.flowkafka.spec.AtMostOnceStrategy.bytes(ae.getValue(), afield));
                    } catch (IllegalArgumentException e) {
                        problems.add(e.getMessage());
                    }
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, ?> map(Object v, String field, List<String> problems) {
        if (v instanceof Map<?, ?> m) {
            return (Map<String, ?>) m;
        }
        problems.add(field + " must be a map but was " + v);
        return Map.of();
    }
}
