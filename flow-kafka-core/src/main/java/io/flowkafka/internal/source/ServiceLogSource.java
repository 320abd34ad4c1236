package io.flowkafka.internal.source;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.Durations;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.StreamSpec;
import io.flowkafka.spi.SourceProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The service-log source ({@code TServiceLogSource}): reads an external table in key order, cycle after cycle, each
 * task its partition's hash range, and emits each row as a message (reference 002: "The service log is an
 * infinite source that cycles through the table. Exactly-once guarantees apply within each cycle.").
 *
 * <p>This class owns the source's name and parameters: {@code table} (a manager's name such as
 * {@code /reference_state}, or a table topic), {@code max_rows_per_second} (a rate limit per task, default none),
 * {@code max_rows_per_iteration} (rows per punctuation, default {@value #DEFAULT_ROWS_PER_ITERATION}) and
 * {@code min_cycle_duration} (a new cycle starts no sooner than this after the previous one started, default
 * 1 s) and {@code finite} (for tests: read one cycle, then complete; default false, as Flow's service log is
 * infinite). It reads no topic: the compiler gives its computation one task per {@code desired_partition_count}.
 *
 * <p>Thread-safe: holds no state.
 */
public final class ServiceLogSource implements SourceProvider {
    /** flow-kafka's {@code source_class_name} of the service log. */
    public static final String SERVICE_LOG_SOURCE = "TServiceLogSource";
    /** Flow's C++ class name, accepted too. */
    public static final String FLOW_NAME = "NYT::NFlow::TServiceLogSource";
    /** Default of {@code max_rows_per_iteration}. */
    public static final int DEFAULT_ROWS_PER_ITERATION = 1000;
    /** Default of {@code min_cycle_duration}. */
    public static final Duration DEFAULT_MIN_CYCLE_DURATION = Duration.ofSeconds(1);
    private static final Set<String> KNOWN = Set.of("table", "max_rows_per_second", "max_rows_per_iteration",
            "min_cycle_duration", "finite");

    /** For {@link java.util.ServiceLoader}. */
    public ServiceLogSource() {
    }

    /** Whether {@code source} is a service log (it reads a table, no topic). */
    public static boolean is(SourceSpec source) {
        return SERVICE_LOG_SOURCE.equals(source.sourceClassName()) || FLOW_NAME.equals(source.sourceClassName());
    }

    /** Whether a computation reads source topics (it has a source that is neither a service log nor punctuated). */
    public static boolean readsTopics(ComputationSpec computation) {
        return computation.sourceStreams().stream().anyMatch(s -> !is(s) && !PunctuatedSources.is(s));
    }

    /** The {@code table} parameter as given. */
    public static String table(SourceSpec source) {
        return String.valueOf(source.parameters().get("table"));
    }

    /**
     * The manager of the table in {@code pipeline}: the manager named by {@code table}, or the one writing the topic
     * {@code table} names; null for a table no manager of the pipeline writes.
     */
    public static @Nullable ExternalStateManagerSpec manager(PipelineSpec pipeline, SourceSpec source) {
        String table = table(source);
        for (ComputationSpec c : pipeline.computations().values()) {
            for (ExternalStateManagerSpec m : c.externalStateManagers().values()) {
                if (m.name().equals(table) || m.tableTopic(pipeline.name()).equals(table)) {
                    return m;
                }
            }
        }
        return null;
    }

    /** The computation whose manager writes the table, or null. */
    public static @Nullable ComputationSpec managerComputation(PipelineSpec pipeline, SourceSpec source) {
        ExternalStateManagerSpec m = manager(pipeline, source);
        if (m == null) {
            return null;
        }
        for (ComputationSpec c : pipeline.computations().values()) {
            if (c.externalStateManagers().get(m.name()) == m) {
                return c;
            }
        }
        return null;
    }

    /** {@code max_rows_per_second}; 0 when unlimited. */
    public static double maxRowsPerSecond(SourceSpec source) {
        Object v = source.parameters().get("max_rows_per_second");
        return v == null ? 0 : Double.parseDouble(v.toString().trim());
    }

    /** {@code max_rows_per_iteration}. */
    public static int maxRowsPerIteration(SourceSpec source) {
        Object v = source.parameters().get("max_rows_per_iteration");
        return v == null ? DEFAULT_ROWS_PER_ITERATION : Integer.parseInt(v.toString().trim());
    }

    /** {@code min_cycle_duration}. */
    public static Duration minCycleDuration(SourceSpec source) {
        Object v = source.parameters().get("min_cycle_duration");
        return v == null ? DEFAULT_MIN_CYCLE_DURATION : Durations.parse(v, "min_cycle_duration");
    }

    /** {@code finite}: read one cycle, then complete. */
    public static boolean finite(SourceSpec source) {
        return Boolean.parseBoolean(String.valueOf(source.parameters().getOrDefault("finite", "false")));
    }

    @Override
    public Set<String> sourceClassNames() {
        return Set.of(SERVICE_LOG_SOURCE, FLOW_NAME);
    }

    @Override
    public Set<String> parameterNames(SourceSpec source) {
        return KNOWN;
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream) {
        List<Problem> problems = new ArrayList<>();
        Map<String, Object> p = source.parameters();
        String of = "service-log source '" + source.streamId() + "' of computation '" + computation.id() + "'";
        if (!(p.get("table") instanceof String t) || t.isBlank()) {
            problems.add(Problem.error("parameters.table", of + " has " + (p.get("table") == null ? "no 'table' parameter"
                    : "an invalid 'table' parameter " + p.get("table")), "set parameters.table to the name of an "
                    + "external state manager (e.g. \"/reference_state\") or to a table topic"));
        }
        try {
            if (maxRowsPerSecond(source) < 0) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            problems.add(Problem.error("parameters.max_rows_per_second", of + " has max_rows_per_second "
                    + p.get("max_rows_per_second"), "set a non-negative number of rows per second (0: no limit)"));
        }
        try {
            if (maxRowsPerIteration(source) < 1) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            problems.add(Problem.error("parameters.max_rows_per_iteration", of + " has max_rows_per_iteration "
                    + p.get("max_rows_per_iteration"), "set a positive number of rows"));
        }
        Object finite = p.get("finite");
        if (finite != null && !(finite instanceof Boolean) && !"true".equals(finite) && !"false".equals(finite)) {
            problems.add(Problem.error("parameters.finite", of + " has finite " + finite, "set true or false"));
        }
        try {
            minCycleDuration(source);
        } catch (IllegalArgumentException e) {
            problems.add(Problem.error("parameters.min_cycle_duration", of + ": " + e.getMessage(),
                    "set a duration such as \"1s\" or \"10m\""));
        }
        return problems;
    }
}
