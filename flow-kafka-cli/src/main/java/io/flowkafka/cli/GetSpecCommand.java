package io.flowkafka.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka get-spec}: prints the spec the pipeline's instances run, as the last instance to start published
 * it on the {@code <pipeline>.dynamic-spec} topic: the spec file's text when the instance was created from a file
 * ({@code FlowRuntime.create(Path, props)}), else (a spec built in Java) its graph; {@code --graph} prints the graph
 * in any case. Nothing published: not found (exit 3).
 */
@Command(name = "get-spec", description = "Print the spec the running instances were started with.")
final class GetSpecCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--graph", description = "print the pipeline's graph instead of the spec text")
    boolean graph;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        String topic = DynamicSpecTopic.name(cluster.topicPrefix, cluster.pipeline);
        try (Admin admin = cluster.admin()) {
            if (!admin.listTopics().names().get().contains(topic)) {
                err.println("flow-kafka get-spec: no topic " + topic + " on " + cluster.bootstrapServers
                        + ": pipeline '" + cluster.pipeline + "' has not run there (check --pipeline and "
                        + "--topic-prefix)");
                return FlowKafkaCli.NOT_FOUND;
            }
        }
        byte[] value = DynamicSpecTopic.readSpec(cluster.pipeline, topic, cluster.clientProperties());
        if (value == null) {
            err.println("flow-kafka get-spec: no instance of '" + cluster.pipeline + "' has published its spec on "
                    + topic + " (instances publish it when they start)");
            return FlowKafkaCli.NOT_FOUND;
        }
        JsonNode doc = GetDynamicSpecCommand.JSON.readTree(value);
        JsonNode text = doc.get("text");
        if (graph || text == null || text.isNull()) {
            if (!graph) {
                err.println("flow-kafka get-spec: the instances were started with a spec built in Java; its graph:");
            }
            out.print(doc.path("graph").asText());
        } else {
            out.print(text.asText());
        }
        out.flush();
        return FlowKafkaCli.OK;
    }
}
