package io.flowkafka.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.examples.activity.ActivityPipeline;
import io.flowkafka.testing.FlowTestDriver;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-written Kafka Streams counter and the flow-kafka activity pipeline count alike. */
class KafkaStreamsCounterTest {
    @Test
    void shouldCountPerUserAsTheFlowPipelineDoes(@TempDir Path stateDir) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "docs-counter");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        try (TopologyTestDriver driver = new TopologyTestDriver(KafkaStreamsCounter.topology("in", "out"), props)) {
            TestInputTopic<String, String> in = driver.createInputTopic("in", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, Long> out = driver.createOutputTopic("out", new StringDeserializer(), new LongDeserializer());
            in.pipeInput("alice", "click");
            in.pipeInput("alice", "view");
            in.pipeInput("bob", "click");
            assertThat(out.readValuesToList()).containsExactly(1L, 2L, 1L);
        }

        try (FlowTestDriver flow = FlowTestDriver.create(
                ActivityPipeline.spec("activity", "user-events", "user-activity-counts", 4))) {
            flow.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
            flow.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"view\",\"ts\":1002}");
            flow.pipeSource("user-events", "bob", "{\"user\":\"bob\",\"action\":\"click\",\"ts\":1003}");
            assertThat(flow.readSinkJson("user-activity-counts")).containsExactly("{\"user\":\"alice\",\"count\":1}",
                    "{\"user\":\"alice\",\"count\":2}", "{\"user\":\"bob\",\"count\":1}");
        }
    }
}
