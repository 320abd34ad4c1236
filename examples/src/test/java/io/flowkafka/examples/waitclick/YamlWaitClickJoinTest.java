package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.testing.FlowTestDriver;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The wait-click join loaded from the YAML spec shipped with the examples
 * ({@code io/flowkafka/examples/waitclick/wait-click.yaml}): it is the Java spec, and every test of
 * {@link WaitClickJoinTest} passes on it.
 */
class YamlWaitClickJoinTest extends WaitClickJoinTest {
    static final String RESOURCE = "io/flowkafka/examples/waitclick/wait-click.yaml";

    @Override
    protected PipelineSpec spec() {
        return PipelineSpecLoader.fromResource(RESOURCE);
    }

    /** The YAML file, as a user would pass it. */
    static Path specFile() {
        try {
            return Path.of(Objects.requireNonNull(YamlWaitClickJoinTest.class.getClassLoader().getResource(RESOURCE),
                    RESOURCE).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldBeTheJavaSpec() {
        PipelineSpec yaml = PipelineSpecLoader.fromFile(specFile());
        PipelineSpec java = WaitClickJoin.spec("wait-click", "impressions", "clicks", "results", 4, false);

        assertThat(yaml.warnings()).isEmpty();
        assertThat(yaml.validate()).isEmpty();
        assertThat(yaml.name()).isEqualTo(java.name());
        assertThat(yaml.streams()).isEqualTo(java.streams());
        // the Java spec passes the join's function as a supplier, the YAML spec by class name
        assertThat(yaml.computations().get("join").processingFunction()).isEqualTo(WaitClickJoin.class.getName());
        assertThat(withoutFunctions(yaml)).isEqualTo(withoutFunctions(java));
    }

    @Test
    void shouldRunFromTheSpecFileOnTheTestDriver() {
        try (FlowTestDriver fromFile = FlowTestDriver.create(specFile())) {
            assertThat(fromFile.specWarnings()).isEmpty();
            fromFile.pipeSource("impressions", "i1", "{\"impression_id\":\"i1\",\"user\":\"u\",\"ts\":0}");
            fromFile.pipeSource("clicks", "i1", "{\"impression_id\":\"i1\",\"ts\":60000}");

            assertThat(fromFile.readSinkJson("results")).singleElement().satisfies(json ->
                    assertThat(json).contains("\"impression_id\":\"i1\"", "\"result\":\"joined\""));
        }
    }

    private static Map<String, ComputationSpec> withoutFunctions(PipelineSpec spec) {
        Map<String, ComputationSpec> out = new LinkedHashMap<>();
        spec.computations().forEach((id, c) -> out.put(id, new ComputationSpec(c.id(), c.kind(), null, null,
                c.inputStreamIds(), c.outputStreamIds(), c.sourceStreams(), c.sinks(), c.groupBySchema(), c.states(),
                c.timers(), c.keyVisitorStreams(), c.streamsDependency(), c.processingMode(), c.parameters(),
                c.desiredPartitionCount(), c.watermarkStrategy())));
        return out;
    }
}
