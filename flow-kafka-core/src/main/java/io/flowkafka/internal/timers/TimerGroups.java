package io.flowkafka.internal.timers;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.TimeType;
import io.flowkafka.spec.TimerStreamSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Timer-stream groups (reference 004): when output limits block one timer stream, handing out
 * ready timers pauses for that stream's whole group, even where the blocked stream has no timers;
 * other groups go on.
 *
 * <p>Two timer streams share a group when they have the same {@code time_type} ({@code event_time}
 * or {@code system_time}) and the sets of streams whose watermark they wait on intersect; the
 * relation is transitive. Different {@code streams_with_delays} values do not split a group. All
 * {@code real_time} timer streams form one group of their own. Every configured timer stream
 * belongs to a group even with no timers registered. Groups add no ordering between streams.
 *
 * <p>A timer stream writes to an output stream when that output's {@code streams_dependency}
 * lists it, or when the output has no {@code streams_dependency} entry (by default an output
 * depends on every timer, input and source stream).
 *
 * <p>Immutable.
 */
public final class TimerGroups {
    private final int[] groupOf;
    private final List<Set<String>> outputsOfGroup = new ArrayList<>();

    public TimerGroups(ComputationSpec spec) {
        List<TimerStreamSpec> timers = spec.timers();
        int n = timers.size();
        int[] parent = new int[n];
        for (int i = 0; i < n; i++) {
            parent[i] = i;
        }
        List<Set<String>> watched = new ArrayList<>();
        Set<String> all = new HashSet<>(spec.inputStreamIds());
        spec.sourceStreams().forEach(src -> all.add(src.streamId())); // a keyed source's timers wait on its sources
        for (TimerStreamSpec t : timers) {
            Map<String, java.time.Duration> w = spec.timerWatchedStreams(t);
            watched.add(w == null ? all : w.keySet());
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                TimeType a = timers.get(i).timeType();
                TimeType b = timers.get(j).timeType();
                boolean same = a == b && (a == TimeType.REAL_TIME || intersects(watched.get(i), watched.get(j)));
                if (same) {
                    union(parent, i, j);
                }
            }
        }
        groupOf = new int[n];
        java.util.Map<Integer, Integer> ids = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            int root = find(parent, i);
            Integer g = ids.get(root);
            if (g == null) {
                g = ids.size();
                ids.put(root, g);
                outputsOfGroup.add(new HashSet<>());
            }
            groupOf[i] = g;
            outputsOfGroup.get(g).addAll(outputsWrittenBy(spec, timers.get(i).id()));
        }
    }

    /** The group of timer stream {@code index}. */
    public int groupOf(int index) {
        return groupOf[index];
    }

    /** The number of groups. */
    public int groups() {
        return outputsOfGroup.size();
    }

    /** The output streams written by any timer stream of group {@code g}. */
    public Set<String> outputsOf(int g) {
        return outputsOfGroup.get(g);
    }

    private static Set<String> outputsWrittenBy(ComputationSpec spec, String timerStream) {
        Set<String> out = new HashSet<>();
        for (String o : spec.outputStreamIds()) {
            List<String> deps = spec.streamsDependency().get(o);
            if (deps == null || deps.contains(timerStream)) {
                out.add(o);
            }
        }
        return out;
    }

    private static boolean intersects(Set<String> a, Set<String> b) {
        for (String s : a) {
            if (b.contains(s)) {
                return true;
            }
        }
        return false;
    }

    private static int find(int[] parent, int i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    }

    private static void union(int[] parent, int a, int b) {
        parent[find(parent, a)] = find(parent, b);
    }
}
