package io.flowkafka.cli;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SpecProblem;
import java.util.List;

/**
 * Validates a spec file the way the runtime would, minus what needs the application's own classes: the CLI runs
 * without the user's jar, so a {@code processing_function} class that cannot be loaded here is not an error here
 * (the runtime checks it at start). Every other problem is.
 */
final class SpecFiles {
    private SpecFiles() {
    }

    static List<SpecProblem> errorsWithoutUserClasses(PipelineSpec spec) {
        return spec.validate().stream()
                .filter(p -> p.severity() == SpecProblem.Severity.ERROR)
                .filter(p -> !(p.field().equals("processing_function") && p.message().contains("cannot be loaded")))
                .toList();
    }
}
