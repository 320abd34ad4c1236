package io.flowkafka.spec;

import io.flowkafka.api.FlowException;
import java.util.List;
import java.util.stream.Collectors;

/** Thrown before anything starts when a spec has errors; lists every error at once. */
public class InvalidSpecException extends FlowException {
    private static final long serialVersionUID = 1L;
    private final transient List<SpecProblem> problems;

    /** Creates the exception from the spec's errors (warnings are ignored here). */
    public InvalidSpecException(String pipeline, List<SpecProblem> problems) {
        super(format(pipeline, problems));
        this.problems = List.copyOf(problems);
    }

    /** The errors, in the order found. */
    public List<SpecProblem> problems() {
        return problems;
    }

    private static String format(String pipeline, List<SpecProblem> problems) {
        return "pipeline '" + pipeline + "' has " + problems.size() + " spec error(s):\n"
                + problems.stream().map(p -> "  - " + p).collect(Collectors.joining("\n"));
    }
}
