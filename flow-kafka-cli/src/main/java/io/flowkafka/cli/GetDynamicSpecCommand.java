package io.flowkafka.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.flowkafka.internal.dynamic.DynamicSpecDocument;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka get-dynamic-spec}: prints the dynamic spec every instance of a pipeline runs with, as the
 * pipeline's compacted {@code <pipeline>.dynamic-spec} topic holds it: {@code {"version": n, "dynamic_spec": {...}}}
 * (version 0 and an empty document when nothing was changed). No such topic: not found (exit 3).
 */
@Command(name = "get-dynamic-spec", description = "Print the dynamic spec in effect on every instance.")
final class GetDynamicSpecCommand implements Callable<Integer> {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() throws Exception {
        String topic = DynamicSpecTopic.name(cluster.topicPrefix, cluster.pipeline);
        try (Admin admin = cluster.admin()) {
            if (!admin.listTopics().names().get().contains(topic)) {
                command.commandLine().getErr().println("flow-kafka get-dynamic-spec: no topic " + topic + " on "
                        + cluster.bootstrapServers + ": pipeline '" + cluster.pipeline + "' has not run there (check "
                        + "--pipeline and --topic-prefix)");
                return FlowKafkaCli.NOT_FOUND;
            }
        }
        DynamicSpecDocument doc = DynamicSpecTopic.read(cluster.pipeline, topic, cluster.clientProperties());
        command.commandLine().getOut().println(JSON.writeValueAsString(asJson(doc)));
        command.commandLine().getOut().flush();
        return FlowKafkaCli.OK;
    }

    static Map<String, Object> asJson(DynamicSpecDocument doc) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("version", doc.version());
        out.put("dynamic_spec", doc.spec());
        return out;
    }
}
