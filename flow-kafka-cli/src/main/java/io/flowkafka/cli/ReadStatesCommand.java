package io.flowkafka.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka read-states}: prints a key's states (JSON) as the running pipeline holds them, asked of any
 * instance, which routes the query to the key's owner. Exit 3 when the key has no state.
 */
@Command(name = "read-states", description = "Print a key's states from a running pipeline (JSON).")
final class ReadStatesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin
    StateQueryClient query;

    @Override
    public Integer call() throws Exception {
        return print(command, cluster, query, "read-states");
    }

    /** Asks, prints the states, or one sentence on stderr; returns the exit code. */
    static int print(picocli.CommandLine.Model.CommandSpec command, ClusterOptions cluster, StateQueryClient query,
            String name) throws Exception {
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        StateQueryClient.Answer a = query.get();
        String pipeline = a.body().path("pipeline").asText(null);
        if (a.status() == 200 && pipeline != null && !pipeline.equals(cluster.pipeline)) {
            err.println("flow-kafka " + name + ": the instance at " + query.instance + " runs pipeline '" + pipeline
                    + "', not '" + cluster.pipeline + "' (check --instance and --pipeline)");
            return FlowKafkaCli.FAILED;
        }
        switch (a.status()) {
            case 200 -> {
                out.println(StateQueryClient.pretty(a.body()));
                out.flush();
                return FlowKafkaCli.OK;
            }
            case 404 -> {
                err.println("flow-kafka " + name + ": " + a.error());
                return FlowKafkaCli.NOT_FOUND;
            }
            case 400 -> {
                err.println("flow-kafka " + name + ": " + a.error());
                return FlowKafkaCli.USAGE;
            }
            default -> {
                err.println("flow-kafka " + name + ": the instance at " + query.instance + " answered " + a.status()
                        + ": " + a.error());
                return FlowKafkaCli.FAILED;
            }
        }
    }
}
