package io.flowkafka.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka read-states}: prints a key's states (JSON) as the running pipeline holds them, with its pending
 * timers and key-visitor coverage, or the states of a range of keys by hash, asked of any instance, which routes the
 * query to the owners. Exit 3 when the key (or every key of the range) has no state.
 */
@Command(name = "read-states", description = "Print a key's states, or a key range's, from a running pipeline "
        + "(JSON).")
final class ReadStatesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    PipelineOption named;

    @Mixin
    StateQueryClient query;

    @Override
    public Integer call() throws Exception {
        String unused = named.unusedOptions("read-states");
        if (unused != null) {
            command.commandLine().getErr().println(unused);
        }
        return print(command, named, query, "read-states");
    }

    /** Asks, prints the states, or one sentence on stderr; returns the exit code. */
    static int print(picocli.CommandLine.Model.CommandSpec command, PipelineOption named, StateQueryClient query,
            String name) throws Exception {
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        String usage = query.usageError();
        if (usage != null) {
            err.println("flow-kafka " + name + ": " + usage);
            return FlowKafkaCli.USAGE;
        }
        StateQueryClient.Answer a = query.get();
        String pipeline = a.body().path("pipeline").asText(null);
        if (a.status() == 200 && pipeline != null && !pipeline.equals(named.pipeline)) {
            err.println("flow-kafka " + name + ": the instance at " + query.instance + " runs pipeline '" + pipeline
                    + "', not '" + named.pipeline + "' (check --instance and --pipeline)");
            return FlowKafkaCli.FAILED;
        }
        switch (a.status()) {
            case 200 -> {
                if (query.range() && a.body().path("keys").isEmpty()) {
                    err.println("flow-kafka " + name + ": computation '" + query.computation + "' has no state for "
                            + "any key with a hash in [" + a.body().path("hash_from").asText() + ", "
                            + a.body().path("hash_to").asText("end") + ")");
                    return FlowKafkaCli.NOT_FOUND;
                }
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
