package io.flowkafka.cli;

import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka pause} and {@code resume}: sets the dynamic spec's {@code paused} (Flow's paused pipeline
 * state), so every instance pauses its processing at once, or resumes it, within about a second; state and offsets
 * stay as committed, and an instance started while it is set starts paused.
 */
@Command(name = "pause", description = "Pause every instance's processing (dynamic spec: paused = true).")
final class PauseCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin

    SpecFileOption specFile;

    @Override
    public Integer call() throws Exception {
        return DynamicSpecChange.publish(command, cluster, specFile, Map.of("paused", true), false);
    }

    /** {@code flow-kafka resume}. */
    @Command(name = "resume", description = "Resume every instance's processing (dynamic spec: paused = false).")
    static final class Resume implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec command;

        @Mixin
        ClusterOptions cluster;

        @Mixin

        SpecFileOption specFile;

        @Override
        public Integer call() throws Exception {
            return DynamicSpecChange.publish(command, cluster, specFile, Map.of("paused", false), false);
        }
    }
}
