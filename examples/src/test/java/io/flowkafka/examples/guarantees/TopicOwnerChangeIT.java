package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.FlowException;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new version of a pipeline whose stream readers are in another order, on a real broker: the internal topics are
 * named by that order, so the start is refused naming the topic, its old and its new reader, unless the operator
 * accepts the change; once accepted and published, the version starts as any other.
 */
@WithKafka
class TopicOwnerChangeIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("Event").namespace("owners").fields()
            .requiredString("user").endRecord();

    /** Copies each message to the computation's output stream. */
    public static final class Copy implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder(context.getComputationId() + "_out")
                    .set("user", message.getPayload().get("user").toString()).build());
        }
    }

    /** {@code read} writes stream {@code events}, which {@code readers} read in that order, each to its own topic. */
    private static PipelineSpec spec(String pipeline, String input, String output, String... readers) {
        PipelineSpec.Builder b = PipelineSpec.builder(pipeline).stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events"));
        for (String r : readers) {
            b.stream(r + "_out", EVENT).computation(r, c -> c.inputStreamIds("events")
                    .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                    .processingFunction(Copy::new).outputStreamIds(r + "_out")
                    .sink("out", "KafkaSink", List.of(r + "_out"), Map.of("topic", output + "-" + r)));
        }
        return b.build();
    }

    @Test
    @Timeout(180)
    void shouldRefuseAVersionThatHandsAReadersTopicToAnotherUnlessAccepted(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("owners");
        cluster.createTopic(input, 1);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "owners").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime v1 = FlowRuntime.create(spec(pipeline, input, output, "a", "b"), props)) {
            v1.start();
            assertThat(v1.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60))).isTrue();
        }
        try (FlowRuntime v2 = FlowRuntime.create(spec(pipeline, input, output, "b", "a"), props)) {
            assertThatThrownBy(v2::start).isInstanceOf(FlowException.class)
                    .hasMessageContaining(pipeline + ".events was read by computation 'a' and would now be read by "
                            + "computation 'b'")
                    .hasMessageContaining("flow.topics.owner.changes=accept");
            assertThat(v2.state()).isEqualTo(FlowRuntime.State.FAILED);
        }
        Properties accepting = new Properties();
        accepting.putAll(props);
        accepting.put("flow.topics.owner.changes", "accept");
        try (FlowRuntime v2 = FlowRuntime.create(spec(pipeline, input, output, "b", "a"), accepting);
                KafkaProducer<String, String> p = producer(cluster)) {
            v2.start();
            assertThat(v2.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60))).isTrue();
            p.send(new ProducerRecord<>(input, "ann", "{\"user\":\"ann\"}")).get();
            assertThat(readCommitted(cluster, output + "-a")).containsExactly("{\"user\":\"ann\"}");
            assertThat(readCommitted(cluster, output + "-b")).containsExactly("{\"user\":\"ann\"}");
        }
        try (FlowRuntime again = FlowRuntime.create(spec(pipeline, input, output, "b", "a"), props)) {
            again.start(); // the accepted version published its readers: the same order is no change
            assertThat(again.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60))).isTrue();
        }
    }

    /** The values of the first committed record of {@code topic}. */
    private static List<String> readCommitted(KafkaCluster cluster, String topic) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.committedConsumer(topic)) {
            c.subscribe(List.of(topic));
            Await.until(Duration.ofSeconds(60), "a committed record in " + topic, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return !out.isEmpty();
            });
        }
        return out;
    }

    private static KafkaProducer<String, String> producer(KafkaCluster cluster) {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(pp);
    }
}
