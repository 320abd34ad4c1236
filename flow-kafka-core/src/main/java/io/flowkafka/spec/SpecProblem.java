package io.flowkafka.spec;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One mistake (or warning) found in a pipeline spec.
 *
 * @param severity error (the pipeline cannot start) or warning (Flow's treatment of unknown fields)
 * @param computation the computation concerned, or null for pipeline-level problems
 * @param field the spec field, with Flow's name (e.g. {@code input_stream_ids})
 * @param message what is wrong, naming the offending value
 * @param fix how to fix it
 */
public record SpecProblem(Severity severity, @Nullable String computation, String field, String message, String fix) {
    /** Whether a problem stops the pipeline from starting. */
    public enum Severity { /** The pipeline cannot start. */ ERROR, /** Reported; the pipeline may start. */ WARNING }

    /**
     * Checks the fields.
     *
     * @param severity error or warning; not null
     * @param computation the computation concerned, or null for pipeline-level problems
     * @param field the spec field, with Flow's name; not null
     * @param message what is wrong; not null
     * @param fix how to fix it; not null
     */
    public SpecProblem {
        Objects.requireNonNull(severity, "severity");
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(fix, "fix");
    }

    /**
     * An error: the pipeline cannot start.
     *
     * @param computation the computation concerned, or null for pipeline-level problems
     * @param field the spec field, with Flow's name (e.g. {@code input_stream_ids})
     * @param message what is wrong, naming the offending value
     * @param fix how to fix it
     * @return a problem of severity {@link Severity#ERROR}
     */
    public static SpecProblem error(@Nullable String computation, String field, String message, String fix) {
        return new SpecProblem(Severity.ERROR, computation, field, message, fix);
    }

    /**
     * A warning: reported, but the pipeline may start.
     *
     * @param computation the computation concerned, or null for pipeline-level problems
     * @param field the spec field, with Flow's name (e.g. {@code input_stream_ids})
     * @param message what is wrong, naming the offending value
     * @param fix how to fix it
     * @return a problem of severity {@link Severity#WARNING}
     */
    public static SpecProblem warning(@Nullable String computation, String field, String message, String fix) {
        return new SpecProblem(Severity.WARNING, computation, field, message, fix);
    }

    /** {@code computation 'c', field 'f': message; fix}. */
    @Override
    public String toString() {
        String where = computation == null ? "pipeline" : "computation '" + computation + "'";
        return where + ", field '" + field + "': " + message + "; fix: " + fix;
    }
}
