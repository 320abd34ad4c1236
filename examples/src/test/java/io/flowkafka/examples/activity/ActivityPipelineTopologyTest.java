package io.flowkafka.examples.activity;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

class ActivityPipelineTopologyTest {
    @Test
    void shouldCountEventsPerUserOnPlainTopologyTestDriver() {
        PipelineSpec spec = ActivityPipeline.spec("activity", "user-events", "user-activity-counts", 4);
        Properties props = new Properties();
        props.put("bootstrap.servers", "unused:9092");
        props.put("flow.state.stores", "memory");
        props.put("flow.topology.test.driver", "true");
        FlowRuntime runtime = FlowRuntime.create(spec, props);
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties())) {
            TestInputTopic<String, String> in = driver.createInputTopic("user-events", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, String> out = driver.createOutputTopic("user-activity-counts",
                    new StringDeserializer(), new StringDeserializer());
            in.pipeInput("alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
            in.pipeInput("bob", "{\"user\":\"bob\",\"action\":\"view\",\"ts\":1001}");
            in.pipeInput("alice", "{\"user\":\"alice\",\"action\":\"view\",\"ts\":1002}");
            in.pipeInput("x", "not json");
            List<String> values = out.readValuesToList();
            assertThat(values).containsExactly("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"bob\",\"count\":1}",
                    "{\"user\":\"alice\",\"count\":2}");
            var dlq = driver.createOutputTopic("activity.dlq", new StringDeserializer(), new StringDeserializer());
            var dead = dlq.readRecordsToList();
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).value()).isEqualTo("not json");
            assertThat(new String(dead.get(0).headers().lastHeader("flow.dlq.computation").value(), StandardCharsets.UTF_8))
                    .isEqualTo("read");
        }
    }
}
