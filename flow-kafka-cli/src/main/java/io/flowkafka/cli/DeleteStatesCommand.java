package io.flowkafka.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka delete-states}: shows which states of a key (or of a key range) a delete would remove (a dry run,
 * the default); with {@code --no-dry-run} deletes them. Keeps the rule that a running pipeline's state changes only
 * in its stream threads, inside their transactions: the instance that owns each key hands the delete to its task,
 * which applies it in its own transaction, and answers once the delete is committed.
 */
@Command(name = "delete-states", description = "Delete a key's states, or a key range's, from a running pipeline "
        + "(a dry run unless --no-dry-run).")
final class DeleteStatesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    PipelineOption named;

    @Mixin
    StateQueryClient query;

    @Option(names = "--dry-run", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "only print what would be deleted (default); --no-dry-run deletes it")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = command.commandLine().getOut();
        String unused = named.unusedOptions("delete-states");
        if (unused != null) {
            command.commandLine().getErr().println(unused);
        }
        String usage = query.usageError();
        if (usage != null) {
            command.commandLine().getErr().println("flow-kafka delete-states: " + usage);
            return FlowKafkaCli.USAGE;
        }
        // what would be deleted, and of which pipeline: checked before anything is deleted
        StateQueryClient.Answer before = query.get();
        String pipeline = before.body().path("pipeline").asText(null);
        if (before.status() != 200 || (pipeline != null && !pipeline.equals(named.pipeline))
                || (query.range() && before.body().path("keys").isEmpty())) {
            return ReadStatesCommand.print(command, named, query, "delete-states");
        }
        StateQueryClient.Answer a = dryRun ? before : query.delete();
        if (a.status() != 200) {
            command.commandLine().getErr().println("flow-kafka delete-states: the instance at " + query.instance
                    + " answered " + a.status() + " to the delete: " + a.error() + "; some of it may be deleted "
                    + "already: read-states tells what is left");
            return a.status() == 400 ? FlowKafkaCli.USAGE : a.status() == 404 ? FlowKafkaCli.NOT_FOUND
                    : FlowKafkaCli.FAILED;
        }
        String what = query.range() ? a.body().path("keys").size() + " key(s) with a hash in ["
                + a.body().path("hash_from").asText() + ", " + a.body().path("hash_to").asText("end") + ")"
                + (a.body().path("truncated").asBoolean() ? " (the first " + query.limit + "; the rest from hash "
                + a.body().path("next_hash_from").asText() + ")" : "")
                : "state(s) " + present(a.body().path("states")) + " of key " + a.body().path("key") + " (partition "
                + a.body().path("partition").asInt() + ", instance " + a.body().path("instance").asText() + ")";
        if (dryRun) {
            out.println("dry run: would delete " + what + " of computation " + query.computation
                    + "; nothing was deleted (--no-dry-run deletes):");
        } else {
            out.println("deleted " + what + " of computation " + query.computation + ": "
                    + a.body().path("deleted_rows").asLong() + " state row(s), committed:");
        }
        out.println(StateQueryClient.pretty(query.range() ? a.body().path("keys") : a.body().path("states")));
        out.flush();
        return FlowKafkaCli.OK;
    }

    private static List<String> present(JsonNode states) {
        List<String> out = new ArrayList<>();
        states.fields().forEachRemaining(e -> {
            if (!e.getValue().isNull()) {
                out.add(e.getKey());
            }
        });
        return out;
    }
}
