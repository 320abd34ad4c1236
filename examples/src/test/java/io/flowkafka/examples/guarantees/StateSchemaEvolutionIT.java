package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.FlowException;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
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
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A state's schema changing between two versions of a pipeline, on a real broker: the new version reads the rows the
 * old one wrote with Avro's schema resolution (a field added with a default), and a version whose state schema cannot
 * read them is refused before it starts, naming the computation and the state.
 */
@WithKafka
class StateSchemaEvolutionIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema VISIT = SchemaBuilder.record("Visit").namespace("evolve").fields()
            .requiredString("user").requiredLong("ts").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("evolve").fields()
            .requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL_V1 = SchemaBuilder.record("Total").namespace("evolve").fields()
            .requiredLong("count").endRecord();
    /** V1 and a field with a default: rows of V1 read with it. */
    static final Schema TOTAL_V2 = SchemaBuilder.record("Total").namespace("evolve").fields()
            .requiredLong("count").name("last").type().stringType().stringDefault("").endRecord();
    /** The count as a string: cannot read a long. */
    static final Schema TOTAL_V3 = SchemaBuilder.record("Total").namespace("evolve").fields()
            .requiredString("count").endRecord();

    /** Counts visits per user in state {@code total}, whatever fields its schema has besides {@code count}. */
    public static final class CountVisits implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            StateAccessor<GenericRecord> total = context.getState("total");
            long n = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            GenericRecord t = total.newRecord();
            t.put("count", n);
            if (t.getSchema().getField("last") != null) {
                t.put("last", user);
            }
            total.set(t);
            output.addMessage(context.createMessageBuilder("counts").set("user", user).set("count", n).build());
        }
    }

    private static PipelineSpec spec(String pipeline, String input, String output, Schema total) {
        return PipelineSpec.builder(pipeline).stream("visits", VISIT).stream("counts", COUNT)
                .computation("count", c -> c
                        .source("visits", "KafkaSource", Map.of("topics", input, "key_partitioned", true))
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts"))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", total).processingFunction(CountVisits::new).outputStreamIds("counts")
                        .sink("out", "KafkaSink", List.of("counts"), Map.of("topic", output, "key_column", "user")))
                .build();
    }

    @Test
    @Timeout(180)
    void shouldReadRowsOfTheOldStateSchemaAndRefuseASchemaThatCannot(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("evolve");
        cluster.createTopic(input, 1);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "evolve").toString());
        props.put("commit.interval.ms", "100");
        try (KafkaProducer<String, String> p = producer(cluster)) {
            try (FlowRuntime v1 = FlowRuntime.create(spec(pipeline, input, output, TOTAL_V1), props)) {
                v1.start();
                send(p, input, "alice", 1_000);
                send(p, input, "alice", 2_000);
                assertThat(readCommitted(cluster, output, 2)).containsExactly("{\"user\":\"alice\",\"count\":1}",
                        "{\"user\":\"alice\",\"count\":2}");
            }
            try (FlowRuntime v2 = FlowRuntime.create(spec(pipeline, input, output, TOTAL_V2), props)) {
                v2.start();
                send(p, input, "alice", 3_000);
                assertThat(readCommitted(cluster, output, 3)).as("the count read from a row of the old schema")
                        .endsWith("{\"user\":\"alice\",\"count\":3}");
            }
            try (FlowRuntime v3 = FlowRuntime.create(spec(pipeline, input, output, TOTAL_V3), props)) {
                assertThatThrownBy(v3::start).isInstanceOf(FlowException.class)
                        .hasMessageContaining("computation 'count', state 'total': its schema cannot read the rows "
                                + "written with an earlier one")
                        .hasMessageContaining("count");
            }
        }
    }

    private static KafkaProducer<String, String> producer(KafkaCluster cluster) {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(pp);
    }

    private static void send(KafkaProducer<String, String> p, String topic, String user, long ts) throws Exception {
        p.send(new ProducerRecord<>(topic, user, "{\"user\":\"" + user + "\",\"ts\":" + ts + "}")).get();
    }

    /** The values of the first {@code expected} committed records of {@code topic}, in order. */
    private static List<String> readCommitted(KafkaCluster cluster, String topic, int expected) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + expected);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            Await.until(Duration.ofSeconds(60), expected + " committed records in " + topic, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return out.size() >= expected;
            });
        }
        return out;
    }
}
