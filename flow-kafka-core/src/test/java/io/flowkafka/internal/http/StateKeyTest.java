package io.flowkafka.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.spi.PipelineCodecs;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** A state query's key: parsed from JSON, it lands in the partition the pipeline routes its records to. */
class StateKeyTest {
    /** Does nothing; the spec needs a function. */
    public static final class Nothing implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    static PipelineSpec spec(int partitions) {
        return PipelineSpecLoader.fromYaml("""
                name: keys
                streams:
                  events: {schema: {type: record, name: E, namespace: t, fields: [{name: user, type: string}, {name: region, type: long}]}}
                computations:
                  read:
                    computation_class_name: Source
                    output_stream_ids: [events]
                    source_streams:
                      events: {source_class_name: KafkaSource, parameters: {topics: in}}
                  count:
                    computation_class_name: Transform
                    processing_function: %s
                    input_stream_ids: [events]
                    desired_partition_count: %d
                    group_by_schema:
                      - {name: hash, type: uint64, expression: "farm_hash(user, region)"}
                      - {name: user, type: string}
                      - {name: region, type: int64}
                    states:
                      n: {schema: {type: record, name: N, namespace: t, fields: [{name: n, type: long}]}}
                """.formatted(Nothing.class.getName(), partitions));
    }

    @Test
    void shouldRouteAJsonKeyToThePartitionOfThePipelinesRecordsForManyKeys() {
        Random random = new Random(27);
        for (int partitions : List.of(1, 2, 3, 4, 7, 16, 100)) {
            PipelineCodecs codecs = PipelineCodecs.of(spec(partitions), new Properties());
            String topic = codecs.topicsOf("events").stream().filter(codecs.internalTopics()::containsKey)
                    .findFirst().orElseThrow();
            assertThat(codecs.internalTopics().get(topic)).isEqualTo(partitions);
            for (int i = 0; i < 500; i++) {
                String user = "user-" + random.nextInt(1_000_000);
                long region = random.nextInt(50) - 10;
                GenericRecord payload = new GenericData.Record(codecs.schemaOf("events"));
                payload.put("user", user);
                payload.put("region", region);
                int pipeline = codecs.partitionOf(codecs.encode("events", payload, MessageId.of(new byte[] {1}), 0, 0)
                        .stream().filter(r -> r.topic().equals(topic)).findFirst().orElseThrow());

                StateKey key = StateKey.parse(codecs, "count", "{\"user\": \"" + user + "\", \"region\": " + region + "}");
                int routed = StateKey.PARTITIONER.partitions(topic, key.encoded(), null, partitions).orElseThrow()
                        .iterator().next();

                assertThat(routed).as("user %s region %d among %d partitions", user, region, partitions)
                        .isEqualTo(pipeline).isEqualTo(key.partition(partitions));
                assertThat(key.encoded()).isEqualTo(codecs.encodeKey("count", codecs.keyOf("count", "events", payload)));
            }
        }
    }

    @Test
    void shouldTakeTheHashWhenGivenAndNameTheColumnOfABadKey() {
        PipelineCodecs codecs = PipelineCodecs.of(spec(4), new Properties());
        StateKey computed = StateKey.parse(codecs, "count", "{\"user\": \"alice\", \"region\": 3}");
        long hash = (Long) computed.key().get("hash");
        StateKey given = StateKey.parse(codecs, "count", "{\"hash\": " + Long.toUnsignedString(hash)
                + ", \"user\": \"alice\", \"region\": 3}");
        assertThat(given.encoded()).isEqualTo(computed.encoded());

        assertThatThrownBy(() -> StateKey.parse(codecs, "count", "{\"usr\": \"alice\", \"region\": 3}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no key column 'usr'")
                .hasMessageContaining("[hash, user, region]");
        assertThatThrownBy(() -> StateKey.parse(codecs, "count", "{\"user\": \"alice\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'region'");
        assertThatThrownBy(() -> StateKey.parse(codecs, "count", "{\"user\": \"alice\", \"region\": \"x\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key column 'region'")
                .hasMessageContaining("int64");
        assertThatThrownBy(() -> StateKey.parse(codecs, "count", "alice"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not JSON")
                .hasMessageContaining("JSON object of its key columns");
    }

    @Test
    void shouldTakeAWholeNumberForADoubleKeyColumn() {
        // a JSON 5 for a double column is 5.0, as JSON does not tell them apart
        PipelineCodecs codecs = PipelineCodecs.of(PipelineSpecLoader.fromYaml("""
                name: prices
                streams:
                  events: {schema: {type: record, name: E, namespace: t, fields: [{name: user, type: string}, {name: price, type: double}]}}
                computations:
                  read:
                    computation_class_name: Source
                    output_stream_ids: [events]
                    source_streams:
                      events: {source_class_name: KafkaSource, parameters: {topics: in}}
                  count:
                    computation_class_name: Transform
                    processing_function: %s
                    input_stream_ids: [events]
                    group_by_schema:
                      - {name: hash, type: uint64, expression: "farm_hash(user)"}
                      - {name: user, type: string}
                      - {name: price, type: double}
                """.formatted(Nothing.class.getName())), new Properties());
        StateKey whole = StateKey.parse(codecs, "count", "{\"user\": \"a\", \"price\": 5}");
        StateKey decimal = StateKey.parse(codecs, "count", "{\"user\": \"a\", \"price\": 5.0}");
        assertThat(whole.encoded()).isEqualTo(decimal.encoded());
        assertThat(whole.key().get("price")).isEqualTo(5.0);
        assertThatThrownBy(() -> StateKey.parse(codecs, "count", "{\"user\": \"a\", \"price\": \"5\"}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key column 'price' of computation 'count' is double but was given a string: 5")
                .hasMessageNotContaining("java.lang");
    }
}
