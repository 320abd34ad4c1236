package io.flowkafka.spec;

import io.flowkafka.api.FlowException;
import java.util.List;
import java.util.stream.Collectors;

/** Thrown before anything starts when a spec has errors; lists every error at once. */
public class InvalidSpecException extends FlowException {
    private static final long serialVersionUID = 1L;
    private final transient List<SpecProblem> problems;

    /**
     * Creates the exception from the spec's errors (warnings are ignored here).
     *
     * @param pipeline the pipeline name, for the message
     * @param problems the errors, each listed in the message
     */
    public InvalidSpecException(String pipeline, List<SpecProblem> problems) {
        this(format(pipeline, problems, "spec error(s)", ""), problems, true);
    }

    /**
     * Creates the exception from the spec's problems: the errors, and after them the warnings, since a misspelt
     * field ({@code input_streams_ids}) is a warning whose error is elsewhere ("has neither input_stream_ids").
     *
     * @param pipeline the pipeline name, for the message
     * @param problems errors and warnings; {@link #problems()} keeps the errors
     * @return the exception
     */
    public static InvalidSpecException of(String pipeline, List<SpecProblem> problems) {
        List<SpecProblem> errors = problems.stream().filter(p -> p.severity() == SpecProblem.Severity.ERROR).toList();
        List<SpecProblem> warnings = problems.stream()
                .filter(p -> p.severity() == SpecProblem.Severity.WARNING).toList();
        String tail = warnings.isEmpty() ? "" : "\nand " + warnings.size() + " warning(s), which may be the cause:\n"
                + warnings.stream().map(p -> "  - " + p).collect(Collectors.joining("\n"));
        return new InvalidSpecException(format(pipeline, errors, "spec error(s)", tail), errors, true);
    }

    /** {@code formatted} tells this constructor from the public one. */
    private InvalidSpecException(String message, List<SpecProblem> problems, boolean formatted) {
        super(message);
        this.problems = List.copyOf(problems);
    }

    /**
     * The exception thrown when a spec has warnings and the deployment rejects them
     * ({@code flow.spec.warnings=fail}).
     *
     * @param pipeline the pipeline name
     * @param warnings every warning of the spec
     * @param setting how the rejection was asked for, e.g. {@code flow.spec.warnings=fail}
     * @return the exception, listing every warning and how to only log them
     */
    public static InvalidSpecException ofWarnings(String pipeline, List<SpecProblem> warnings, String setting) {
        return new InvalidSpecException(format(pipeline, warnings, "spec warning(s), rejected because " + setting,
                "\nfix them, or set " + setting.replaceFirst("=.*", "") + "=log to only log them"), warnings, true);
    }

    /**
     * The errors (or, for {@link #ofWarnings}, the warnings), in the order found.
     *
     * @return an unmodifiable list of the problems; null in a deserialized exception (the field
     *     is transient)
     */
    public List<SpecProblem> problems() {
        return problems;
    }

    private static String format(String pipeline, List<SpecProblem> problems, String what, String tail) {
        return "pipeline '" + pipeline + "' has " + problems.size() + " " + what + ":\n"
                + problems.stream().map(p -> "  - " + p).collect(Collectors.joining("\n")) + tail;
    }
}
