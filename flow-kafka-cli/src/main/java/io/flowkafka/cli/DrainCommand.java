package io.flowkafka.cli;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka drain}: sets {@code draining} on computations (all that read source topics unless
 * {@code --computation} names some), so every instance stops reading their source topics while what was read
 * flows through the pipeline's internal streams to its sinks; {@code status} shows the lag of internal topics fall
 * to 0. {@code --cancel} reads the sources again. The instances keep running: stop them once drained.
 */
@Command(name = "drain", description = "Stop reading source topics on every instance, so the pipeline drains "
        + "(dynamic spec: draining).")
final class DrainCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Mixin

    SpecFileOption specFile;

    @Option(names = {"-c", "--computation"}, paramLabel = "ID",
            description = "a computation to drain (repeatable); default: every one with source_streams")
    List<String> computations = new ArrayList<>();

    @Option(names = "--cancel", description = "read the source topics again")
    boolean cancel;

    @Override
    public Integer call() throws Exception {
        List<String> ids = computations;
        if (ids.isEmpty()) {
            ids = PipelineSpecLoader.fromFile(specFile.file).computations().values().stream()
                    .filter(c -> !c.sourceStreams().isEmpty()).map(ComputationSpec::id).toList();
        }
        Map<String, Object> each = new LinkedHashMap<>();
        for (String id : ids) {
            Map<String, Object> setting = new LinkedHashMap<>();
            setting.put("draining", cancel ? null : Boolean.TRUE); // null: back to the static value, reading
            each.put(id, setting);
        }
        return DynamicSpecChange.publish(command, cluster, specFile, Map.of("computations", each), false);
    }
}
