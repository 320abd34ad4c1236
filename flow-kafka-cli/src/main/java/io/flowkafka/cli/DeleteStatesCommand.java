package io.flowkafka.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka delete-states}: shows which states of a key a delete would remove (a dry run, the default), and
 * refuses the delete itself (exit 4). Keeps the rule that a running pipeline's state changes only in its stream
 * threads, inside their transactions: a write from outside would not be fenced, and a replay would bring the state
 * back or lose the delete, which breaks exactly-once.
 */
@Command(name = "delete-states", description = "Show the states a delete of a key would remove (dry run); "
        + "the delete itself is refused on a running pipeline.")
final class DeleteStatesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin
    StateQueryClient query;

    @Option(names = "--dry-run", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "only print what would be deleted (default); --no-dry-run asks for the delete, which is "
                    + "refused")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        if (!dryRun) {
            err.println("flow-kafka delete-states: refused: a running pipeline's states change only inside its own "
                    + "transactions, and a delete from outside would break exactly-once (a replay could bring the "
                    + "state back); clear the state in the process function (e.g. on a tombstone message sent through "
                    + "the pipeline), or stop every instance and reset the pipeline");
            return FlowKafkaCli.REFUSED;
        }
        StateQueryClient.Answer a = query.get();
        if (a.status() != 200) {
            return ReadStatesCommand.print(command, cluster, query, "delete-states");
        }
        List<String> present = new ArrayList<>();
        a.body().path("states").fields().forEachRemaining(e -> {
            if (!e.getValue().isNull()) {
                present.add(e.getKey());
            }
        });
        out.println("dry run: would delete state(s) " + present + " of key " + a.body().path("key") + " of computation "
                + query.computation + " (partition " + a.body().path("partition").asInt() + ", instance "
                + a.body().path("instance").asText() + "); nothing was deleted:");
        out.println(StateQueryClient.pretty(a.body().path("states")));
        out.flush();
        return FlowKafkaCli.OK;
    }
}
