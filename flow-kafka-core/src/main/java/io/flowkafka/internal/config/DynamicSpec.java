package io.flowkafka.internal.config;

import io.flowkafka.internal.skip.SkipExpression;
import io.flowkafka.internal.skip.SkipSetting;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dynamic part of a pipeline's spec (Flow's {@code dynamic_spec}) held by one runtime: what a
 * running pipeline may change without restart: key-visitor settings and at-most-once queue limits. Tasks read it on
 * every punctuation, so a change takes effect at the next one.
 *
 * <p>Shape of a change, as in Flow: {@code {"computations": {"<id>": {"key_visitor_streams":
 * {"<name>": {"period": "1h"}}}}}}.
 *
 * <p>It owns the <em>document</em> in effect: the merge of every change so far (a JSON-like tree of maps), and keeps
 * one rule: every setting in effect is its static value overridden by the document, and a document is checked whole
 * against the static spec before any of it takes effect (all or nothing, every problem listed with its field). A
 * change is merged into the document ({@link #merge}); a whole document from the pipeline's dynamic-spec topic
 * replaces it ({@link #replace}).
 *
 * <p>Threading: changed by any thread (changes are serialized), read by stream threads; each value is immutable.
 */
public final class DynamicSpec {
    private static final Logger LOG = LoggerFactory.getLogger(DynamicSpec.class);
    private final Map<String, KeyVisitorSettings> visitors = new ConcurrentHashMap<>();
    /** {@code at_most_once_strategy.total_queue_bytes_limit} of each at-most-once sink, by (computation, sink). */
    private final Map<String, Long> queueLimits = new ConcurrentHashMap<>();
    private final Map<String, ComputationSpec> computations;
    /** The dynamic parameters of punctuated sources, by (computation, stream), as last changed. */
    private final Map<String, Map<String, Object>> sourceParameters = new ConcurrentHashMap<>();
    /** {@code skip_if_expression} of every computation, by id; each task keeps its own and reads it per message. */
    private final Map<String, SkipSetting> skipIf = new LinkedHashMap<>();
    private final Map<String, KeyVisitorSettings> staticVisitors = new LinkedHashMap<>();
    private final Map<String, Long> staticQueueLimits = new LinkedHashMap<>();
    /** The document in effect; replaced whole, never changed in place. Guarded by {@code this}. */
    private Map<String, Object> document = Map.of();
    /** {@code paused}: every instance keeps its processing paused (Flow's paused pipeline state). */
    private volatile boolean paused;
    /** {@code stopped}: every instance drains and stops (Flow's stopped pipeline state). */
    private volatile boolean stopped;
    /** The computations whose {@code draining} is true: they stop reading their source topics. */
    private volatile Set<String> draining = Set.of();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

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
        staticVisitors.putAll(visitors);
        staticQueueLimits.putAll(queueLimits);
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

    /** Whether the document in effect pauses the pipeline ({@code "paused": true}). */
    public boolean paused() {
        return paused;
    }

    /** Whether the document in effect stops the pipeline ({@code "stopped": true}). */
    public boolean stopped() {
        return stopped;
    }

    /** The computations the document in effect drains ({@code computations.<id>.draining: true}). */
    public Set<String> drainingComputations() {
        return draining;
    }

    /** Runs {@code listener} after each document that takes effect (on the thread that applied it). */
    public void onChange(Runnable listener) {
        listeners.add(listener);
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
     * Applies a change all at once, or nothing of it: merges it into the document in effect ({@link #merge}) and
     * {@link #replace replaces} the document with the result.
     *
     * @param change a partial document; a {@code null} value removes a setting, which then has its static value again
     * @throws IllegalArgumentException listing every problem of the merged document, each with its field
     */
    public synchronized void apply(Map<String, ?> change) {
        Map<String, Object> merged = merge(document, change);
        install(plan(merged, "the dynamic spec change was not applied: "), merged);
    }

    /**
     * Replaces the whole dynamic document, all or nothing: every setting takes its static value, then the
     * document's; a setting the document does not name returns to its static value.
     *
     * @param newDocument the whole dynamic document, in the layout of {@link #apply}
     * @throws IllegalArgumentException listing every problem of the document, each with its field; nothing changes
     */
    public synchronized void replace(Map<String, ?> newDocument) {
        Map<String, Object> copy = merge(Map.of(), newDocument);
        install(plan(copy, "the dynamic spec document was not applied: "), copy);
    }

    /**
     * Replaces the whole dynamic document as {@link #replace} does, except what this instance's spec cannot apply
     * (a computation, stream or sink it does not have, a value it does not accept): that part is left out instead
     * of the whole document being refused. For an instance that starts while the document in the topic was written
     * for another version of the spec (a rolling deploy): it must not run with the static settings then, ignoring
     * a pause, a stop, a drain, a skip expression or a rate limit the document sets.
     *
     * @param newDocument the whole dynamic document
     * @return the problems of the parts left out, each with its field; empty when all of it applied
     */
    public synchronized List<String> replaceWhatApplies(Map<String, ?> newDocument) {
        Map<String, Object> copy = merge(Map.of(), newDocument);
        List<String> problems = new ArrayList<>();
        Plan plan = plan(copy, problems);
        if (plan.safetyUnknown()) {
            // a pause, stop, drain or skip expression this instance cannot read: it must not process in its place
            plan = plan.pausing();
            problems.add("this instance stays paused: it cannot apply a pause, stop, drain or skip_if_expression of "
                    + "the document");
        }
        install(plan, copy);
        return problems;
    }

    /**
     * Checks a whole dynamic document against the static spec without applying it.
     *
     * @param candidate the whole dynamic document
     * @throws IllegalArgumentException listing every problem, each with its field
     */
    public void validate(Map<String, ?> candidate) {
        plan(candidate, "the dynamic spec change was not applied: ");
    }

    /**
     * The document in effect: the merge of every change applied (or the last document replaced) so far.
     *
     * @return an unmodifiable deep copy; empty when every setting has its static value
     */
    public synchronized Map<String, Object> document() {
        return freeze(document);
    }

    /**
     * Merges a change into a document, as a JSON merge patch (RFC 7386) does: maps merge key by key, any other value
     * replaces what was there, a {@code null} removes the key (and a map that removals left empty goes too). Values
     * are kept as JSON holds them: a {@link Duration} becomes a string such as {@code "1500ms"}.
     *
     * @param base the document to start from; not changed
     * @param change the change
     * @return a new, mutable document
     */
    public static Map<String, Object> merge(Map<String, ?> base, Map<String, ?> change) {
        Map<String, Object> out = new LinkedHashMap<>();
        base.forEach((k, v) -> out.put(k, normalize(v)));
        for (Map.Entry<String, ?> e : change.entrySet()) {
            String k = String.valueOf(e.getKey());
            Object v = e.getValue();
            if (v == null) {
                out.remove(k);
            } else if (v instanceof Map<?, ?> m) {
                Map<String, Object> merged = merge(out.get(k) instanceof Map<?, ?> old ? stringKeys(old) : Map.of(),
                        stringKeys(m));
                if (merged.isEmpty() && !m.isEmpty()) { // emptied by removals; an empty map given stays, to be checked
                    out.remove(k);
                } else {
                    out.put(k, merged);
                }
            } else {
                out.put(k, normalize(v));
            }
        }
        return out;
    }

    private static Map<String, Object> stringKeys(Map<?, ?> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(String.valueOf(k), v));
        return out;
    }

    private static @Nullable Object normalize(@Nullable Object v) {
        if (v instanceof Map<?, ?> m) {
            return merge(Map.of(), stringKeys(m));
        }
        if (v instanceof Collection<?> c) {
            List<Object> out = new ArrayList<>();
            c.forEach(x -> out.add(normalize(x)));
            return out;
        }
        if (v instanceof Duration d) {
            return d.getNano() % 1_000_000 == 0 ? d.toMillis() + "ms" : d.toNanos() + "ns";
        }
        if (v == null || v instanceof String || v instanceof Number || v instanceof Boolean) {
            return v;
        }
        return String.valueOf(v);
    }

    private static Map<String, Object> freeze(Map<String, ?> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, v instanceof Map<?, ?> inner ? freeze(stringKeys(inner))
                : v instanceof List<?> l ? Collections.unmodifiableList(new ArrayList<>(l)) : v));
        return Collections.unmodifiableMap(out);
    }

    /** What a valid document sets, computed from the static values. */
    private record Plan(Map<String, KeyVisitorSettings> visitors, Map<String, Long> queueLimits,
            Map<String, Map<String, Object>> sourceParameters, Map<String, SkipExpression> skipIf,
            Set<String> draining, boolean paused, boolean stopped, boolean safetyUnknown) {
        /** The plan with the pipeline paused. */
        Plan pausing() {
            return new Plan(visitors, queueLimits, sourceParameters, skipIf, draining, true, stopped, safetyUnknown);
        }
    }

    private void install(Plan plan, Map<String, Object> newDocument) {
        staticVisitors.forEach((k, v) -> visitors.put(k, plan.visitors().getOrDefault(k, v)));
        staticQueueLimits.forEach((k, v) -> queueLimits.put(k, plan.queueLimits().getOrDefault(k, v)));
        sourceParameters.keySet().retainAll(plan.sourceParameters().keySet());
        sourceParameters.putAll(plan.sourceParameters());
        skipIf.forEach((cid, setting) -> setting.set(plan.skipIf().get(cid))); // absent from the document: none
        draining = Set.copyOf(plan.draining());
        paused = plan.paused();
        stopped = plan.stopped();
        document = newDocument;
        for (Runnable listener : listeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                LOG.warn("a dynamic spec listener failed: {}", e.toString(), e);
            }
        }
    }

    /**
     * Checks a whole document against the static spec.
     *
     * @throws IllegalArgumentException starting with {@code prefix}, listing every problem
     */
    private Plan plan(Map<String, ?> change, String prefix) {
        List<String> problems = new ArrayList<>();
        Plan plan = plan(change, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(prefix + String.join("; ", problems));
        }
        return plan;
    }

    /** What a document sets, leaving out its parts with problems, which are added to {@code problems}. */
    private Plan plan(Map<String, ?> change, List<String> problems) {
        Map<String, KeyVisitorSettings> updates = new LinkedHashMap<>();
        Map<String, Long> queueUpdates = new LinkedHashMap<>();
        Map<String, Map<String, Object>> sourceUpdates = new LinkedHashMap<>();
        Map<String, SkipExpression> skipUpdates = new LinkedHashMap<>(); // a null value removes the expression
        Set<String> drainingUpdates = new LinkedHashSet<>();
        boolean pausedUpdate = false;
        boolean stoppedUpdate = false;
        boolean safetyUnknown = false;
        for (Map.Entry<String, ?> top : change.entrySet()) {
            if (top.getKey().equals("paused") || top.getKey().equals("stopped")) {
                if (!(top.getValue() instanceof Boolean b)) {
                    safetyUnknown = true;
                    problems.add("dynamic_spec." + top.getKey() + " must be true or false but was " + top.getValue());
                } else if (top.getKey().equals("paused")) {
                    pausedUpdate = b;
                } else {
                    stoppedUpdate = b;
                }
                continue;
            }
            if (!top.getKey().equals("computations")) {
                problems.add("dynamic_spec." + top.getKey() + " is not a dynamic setting; use paused, stopped or computations."
                        + "<id>.<setting> (key_visitor_streams, skip_if_expression, draining, sinks, source_streams)");
                continue;
            }
            for (Map.Entry<String, ?> ce : map(top.getValue(), "dynamic_spec.computations", problems).entrySet()) {
                String cid = ce.getKey();
                String cfield = "dynamic_spec.computations." + cid;
                ComputationSpec c = computations.get(cid);
                if (c == null) {
                    problems.add(cfield + ": unknown computation '" + cid + "'; the pipeline has " + computations.keySet());
                    // a drain or a skip set on it (a computation renamed in a rolling upgrade) cannot be applied
                    if (ce.getValue() instanceof Map<?, ?> settings && (settings.get("draining") != null
                            && !Boolean.FALSE.equals(settings.get("draining"))
                            || settings.get("skip_if_expression") != null)) {
                        safetyUnknown = true;
                    }
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
                    if (fe.getKey().equals("draining")) {
                        if (!(fe.getValue() instanceof Boolean b)) {
                            safetyUnknown = true;
                            problems.add(cfield + ".draining must be true or false but was " + fe.getValue());
                        } else if (c.sourceStreams().isEmpty()) {
                            safetyUnknown |= b; // a drain that cannot be applied
                            problems.add(cfield + ".draining: computation '" + cid + "' has no source_streams; "
                                    + "draining stops a computation reading its source topics, so set it on the "
                                    + "computations that read them");
                        } else if (b) {
                            drainingUpdates.add(cid);
                        }
                        continue;
                    }
                    if (fe.getKey().equals("skip_if_expression")) {
                        try {
                            skipUpdates.put(cid, skipIf.get(cid).compile(fe.getValue()));
                        } catch (IllegalArgumentException e) {
                            safetyUnknown = true;
                            problems.add(cfield + "." + e.getMessage()); // the message starts with skip_if_expression
                        }
                        continue;
                    }
                    if (!fe.getKey().equals("key_visitor_streams")) {
                        problems.add(cfield + "." + fe.getKey() + " is not a dynamic setting; use key_visitor_streams,"
                                + " skip_if_expression, draining or sinks.<sink>.at_most_once_strategy."
                                + "total_queue_bytes_limit");
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
                        KeyVisitorSettings base = updates.getOrDefault(k, staticVisitors.get(k));
                        try {
                            updates.put(k, base.with(map(ve.getValue(), vfield + "." + vid, problems), vfield + "." + vid));
                        } catch (IllegalArgumentException e) {
                            problems.add(e.getMessage());
                        }
                    }
                }
            }
        }
        return new Plan(updates, queueUpdates, sourceUpdates, skipUpdates, drainingUpdates, pausedUpdate,
                stoppedUpdate, safetyUnknown);
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
            int problemsBefore = problems.size();
            Map<String, Object> merged = new LinkedHashMap<>(updates.getOrDefault(k, Map.of()));
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
            if (problems.size() == problemsBefore) {
                updates.put(k, merged); // a source's parameters apply together or not at all
            }
        }
    }

    private void applySinks(ComputationSpec c, String field, Map<String, ?> sinks, List<String> problems,
            Map<String, Long> queueUpdates) {
        for (Map.Entry<String, ?> se : sinks.entrySet()) {
            String sfield = field + "." + se.getKey();
            String k = key(c.id(), se.getKey());
            if (!staticQueueLimits.containsKey(k)) {
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
