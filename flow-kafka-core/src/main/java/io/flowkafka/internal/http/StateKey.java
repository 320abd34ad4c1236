package io.flowkafka.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.spi.PipelineCodecs;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.jspecify.annotations.Nullable;

/**
 * A key of a computation as a state query names it: the JSON object of its {@code group_by_schema} columns (computed
 * columns such as the hash may be left out), turned into the key record and the encoded key the pipeline stores and
 * partitions by. Keeps the rule that a query finds the partition exactly as the pipeline's records do: the range
 * partition of the encoded key's hash ({@link RangePartitioner}), through {@link #PARTITIONER}.
 *
 * @param computation the computation's id
 * @param key the key record, computed columns filled in
 * @param encoded the encoded key (hash first), as records and store rows are keyed
 */
record StateKey(String computation, GenericRecord key, byte[] encoded) {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Partitions an encoded key as the pipeline partitions its internal topics (Kafka Streams calls it with no value). */
    static final StreamPartitioner<byte[], Object> PARTITIONER = new StreamPartitioner<>() {
        @Override
        public Optional<Set<Integer>> partitions(String topic, byte[] key, @Nullable Object value, int numPartitions) {
            return Optional.of(Set.of(RangePartitioner.partition(RangePartitioner.hashOf(key), numPartitions)));
        }
    };

    /** A partitioner that names {@code partition} for every key: Kafka Streams' metadata then names its owner. */
    static StreamPartitioner<byte[], Object> fixedPartition(int partition) {
        return new StreamPartitioner<>() {
            @Override
            public Optional<Set<Integer>> partitions(String topic, byte[] key, @Nullable Object value, int n) {
                return Optional.of(Set.of(partition));
            }
        };
    }

    /**
     * Parses {@code json}, an object of key columns by name.
     *
     * @param codecs the pipeline's codecs; the caller guards them (not thread-safe)
     * @throws IllegalArgumentException a sentence naming the computation, the column and the fix
     */
    static StateKey parse(PipelineCodecs codecs, String computation, String json) {
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("key " + json + " is not JSON (" + e.getOriginalMessage() + "); give the "
                    + "key of computation '" + computation + "' as a JSON object of its key columns, e.g. {\"user\": \"alice\"}");
        }
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("key " + json + " is not a JSON object; give the key of computation '"
                    + computation + "' as a JSON object of its key columns, e.g. {\"user\": \"alice\"}");
        }
        Map<String, @Nullable Object> columns = new LinkedHashMap<>();
        for (var it = node.fields(); it.hasNext();) {
            var e = it.next();
            JsonNode v = e.getValue();
            columns.put(e.getKey(), v.isNull() ? null : v.isTextual() ? v.textValue() : v.isBoolean() ? v.booleanValue()
                    : v.isIntegralNumber() && v.canConvertToLong() ? (Object) v.longValue()
                    : v.isIntegralNumber() ? (Object) Long.parseUnsignedLong(v.asText())
                    : v.isNumber() ? (Object) v.doubleValue() : v.toString());
        }
        GenericRecord key = codecs.keyOf(computation, columns);
        return new StateKey(computation, key, codecs.encodeKey(computation, key));
    }

    /** The partition of this key among {@code partitions}, as the pipeline routes its records. */
    int partition(int partitions) {
        return RangePartitioner.partition(RangePartitioner.hashOf(encoded), partitions);
    }
}
