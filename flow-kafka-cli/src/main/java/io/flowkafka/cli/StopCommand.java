package io.flowkafka.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka stop} and {@code start}: Flow's stopped pipeline state. {@code stop} sets the dynamic spec's
 * {@code stopped}, so every instance drains (stops reading its sources, processes what is in flight) and stops;
 * then it waits, showing how many instances still run, until none does ({@code --no-wait} returns at once). An
 * instance started while the pipeline is stopped drains and stops too: {@code start} clears the setting first.
 */
@Command(name = "stop", description = "Drain and stop every instance (dynamic spec: stopped = true); waits until "
        + "none runs.")
final class StopCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin

    SpecFileOption specFile;

    @Option(names = "--no-wait", description = "return once published, without waiting for the instances")
    boolean noWait;

    @Option(names = "--timeout", defaultValue = "PT6M", paramLabel = "DURATION",
            description = "how long to wait for every instance to stop (ISO-8601, default PT6M)")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        int published = DynamicSpecChange.publish(command, cluster, specFile, Map.of("stopped", true), false);
        if (published != FlowKafkaCli.OK || noWait) {
            return published;
        }
        PrintWriter out = command.commandLine().getOut();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Admin admin = cluster.admin()) {
            if (PipelineGroup.describe(admin, cluster.applicationId()) == null) {
                // a wrong --application-id-prefix looks like a pipeline with no instance: say which, do not say stopped
                command.commandLine().getErr().println("flow-kafka stop: published, but the cluster has no consumer "
                        + "group '" + cluster.applicationId() + "', so no instance of " + cluster.pipeline + " can be "
                        + "followed; if instances run, give their flow.application.id.prefix as --application-id-prefix");
                return FlowKafkaCli.NOT_FOUND;
            }
            int last = -1;
            while (true) {
                int running = members(admin, cluster.applicationId());
                if (running == 0) {
                    out.println("stopped: no instance of " + cluster.pipeline + " runs");
                    out.flush();
                    return FlowKafkaCli.OK;
                }
                if (running != last) {
                    out.println("  draining: " + running + " instance(s) still running");
                    out.flush();
                    last = running;
                }
                if (System.nanoTime() > deadline) {
                    command.commandLine().getErr().println("flow-kafka stop: " + running + " instance(s) still run "
                            + "after " + timeout + "; each stops once drained, at most 5 minutes after it saw the "
                            + "change (check their logs and flow-kafka status)");
                    return FlowKafkaCli.FAILED;
                }
                Thread.sleep(500); // polling the group between checks
            }
        }
    }

    private static int members(Admin admin, String group) throws Exception {
        PipelineGroup described = PipelineGroup.describe(admin, group);
        return described == null ? 0 : described.instances();
    }

    /** {@code flow-kafka start}. */
    @Command(name = "start", description = "Let instances run again after stop (dynamic spec: stopped removed); "
            + "then start them.")
    static final class Start implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec command;

        @Mixin
        ClusterOptions cluster;

        @Mixin

        SpecFileOption specFile;

        @Override
        public Integer call() throws Exception {
            Map<String, Object> change = new HashMap<>();
            change.put("stopped", null); // back to the static value: running
            return DynamicSpecChange.publish(command, cluster, specFile, change, false);
        }
    }
}
