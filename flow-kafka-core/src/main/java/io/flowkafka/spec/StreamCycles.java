package io.flowkafka.spec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds cycles of internal streams that no {@code streams_dependency} breaks, and reports each as an error.
 *
 * <p>A computation's output takes its watermark (and its completion) from the computation's inputs: all of them, or
 * only those its {@code streams_dependency} entry lists. When a stream depends on itself through a chain of
 * computations, its watermark waits for itself and never advances: event-time timers never fire and a finite
 * pipeline never completes, with no error anywhere. Flow allows a cyclic topology only when
 * {@code streams_dependency} leaves the loop out (the key-visitor request/response pattern); so does this rule.
 *
 * <p>The graph has one node per stream and an edge from an input to an output of the same computation when the
 * output depends on it. Timer and key-visitor streams add no edge: a rule that errs only towards accepting.
 */
final class StreamCycles {
    /** An output written by a computation that depends on the input the edge leaves from. */
    private record Edge(String computation, String output) {
    }

    private final Map<String, List<Edge>> edges = new LinkedHashMap<>();
    private final Map<String, Integer> state = new HashMap<>(); // absent: unvisited, 1: on the path, 2: done
    private final List<String> pathStreams = new ArrayList<>();
    private final List<Edge> pathEdges = new ArrayList<>();
    private final Set<Set<String>> reported = new HashSet<>();
    private final List<SpecProblem> errors = new ArrayList<>();

    private StreamCycles(PipelineSpec spec) {
        for (ComputationSpec c : spec.computations().values()) {
            for (String output : c.outputStreamIds()) {
                List<String> deps = c.streamsDependency().get(output);
                for (String input : c.inputStreamIds()) {
                    if (deps == null || deps.contains(input)) {
                        List<Edge> out = edges.computeIfAbsent(input, k -> new ArrayList<>());
                        Edge e = new Edge(c.id(), output);
                        if (!out.contains(e)) {
                            out.add(e);
                        }
                    }
                }
            }
        }
    }

    /** One error per cycle of {@code spec}'s streams, in spec order; empty when there is none. */
    static List<SpecProblem> check(PipelineSpec spec) {
        StreamCycles cycles = new StreamCycles(spec);
        for (String stream : List.copyOf(cycles.edges.keySet())) {
            if (!cycles.state.containsKey(stream)) {
                cycles.visit(stream);
            }
        }
        return cycles.errors;
    }

    /** Depth-first, iterative so a long chain of streams cannot overflow the stack. */
    private void visit(String start) {
        List<Integer> next = new ArrayList<>();
        pathStreams.add(start);
        next.add(0);
        state.put(start, 1);
        while (!pathStreams.isEmpty()) {
            int top = pathStreams.size() - 1;
            String stream = pathStreams.get(top);
            List<Edge> out = edges.getOrDefault(stream, List.of());
            int i = next.get(top);
            if (i == out.size()) {
                state.put(stream, 2);
                pathStreams.remove(top);
                next.remove(top);
                if (!pathEdges.isEmpty()) {
                    pathEdges.remove(pathEdges.size() - 1);
                }
                continue;
            }
            next.set(top, i + 1);
            Edge e = out.get(i);
            Integer s = state.get(e.output());
            if (s == null) {
                pathEdges.add(e);
                pathStreams.add(e.output());
                next.add(0);
                state.put(e.output(), 1);
            } else if (s == 1) {
                report(pathStreams.indexOf(e.output()), e);
            }
        }
    }

    private void report(int from, Edge closing) {
        List<String> streams = new ArrayList<>(pathStreams.subList(from, pathStreams.size()));
        List<Edge> loop = new ArrayList<>(pathEdges.subList(from, pathEdges.size()));
        loop.add(closing);
        if (!reported.add(new TreeSet<>(streams))) {
            return;
        }
        StringBuilder chain = new StringBuilder("'" + streams.get(0) + "'");
        for (Edge e : loop) {
            chain.append(" -> ").append(e.computation()).append(" -> '").append(e.output()).append("'");
        }
        String input = streams.get(streams.size() - 1);
        errors.add(SpecProblem.error(closing.computation(), "input_stream_ids", "streams form a cycle: " + chain
                + "; each output there depends on all inputs of its computation (no streams_dependency leaves the "
                + "loop out), so the watermark of '" + closing.output() + "' waits for itself: event-time timers "
                + "never fire and the pipeline never completes",
                "stop reading '" + input + "' in '" + closing.computation() + "', or break the cycle with "
                        + "streams_dependency: \"streams_dependency\": {\"" + closing.output() + "\": [<the inputs of '"
                        + closing.computation() + "' outside the cycle>]}"));
    }
}
