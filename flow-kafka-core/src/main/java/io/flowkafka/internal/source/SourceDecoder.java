package io.flowkafka.internal.source;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.processor.ComputationPlan;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.serde.PluggableSerdes;
import io.flowkafka.internal.serde.RecordConverter;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * Reads the records of one input topic of a computation into messages: an internal stream's records (payload,
 * key and {@code flow.*} metadata headers) or a source's (JSON, Avro or a value_serde; key_column; the event
 * timestamp from a column or the record; the message id from topic, partition and offset, so a replay reads the
 * same ids). Holds nothing per task but the source's serde, closed with the task.
 */
public final class SourceDecoder {
    public final String streamId;
    public final @Nullable SourceSpec source;
    private final AvroCodec payloadCodec;
    private final Schema schema;
    private final boolean json;
    private final @Nullable String keyColumn;
    private final @Nullable String timestampColumn;
    private final long timestampUnitNanos;
    public final @Nullable PartitionFilter partitionFilter;
    /** The source's value_serde and the converter of its records to the stream's schema, or null. */
    private final @Nullable Serde<Object> valueSerde;
    private final @Nullable String valueSerdeClass;
    private final @Nullable RecordConverter converter;
    /** A source read by a keyed Transform: computes the group-by key from the record; else null. */
    private final KeyCodec.@Nullable Extractor keyExtractor;
    private int origin;
    private int originPartition = -1;

    private final KeyCodec keyCodec;

    /**
     * @param in the input: a topic of an internal stream, or of a source
     * @param schema the stream's schema
     * @param keyCodec the computation's group-by key codec
     * @param spec the computation
     * @param deployment the deployment's properties (the serdes' {@code flow.serde.*})
     */
    public SourceDecoder(ComputationPlan.Input in, Schema schema, KeyCodec keyCodec, ComputationSpec spec,
            Map<String, Object> deployment) {
        this.keyCodec = keyCodec;
        this.streamId = in.streamId();
        this.source = in.source();
        this.schema = schema;
        this.payloadCodec = new AvroCodec(schema);
        if (source != null) {
            Map<String, Object> p = source.parameters();
            this.partitionFilter = KafkaSourceParameters.partitionFilter(source);
            Object serdeClass = p.get("value_serde");
            if (serdeClass != null) {
                this.valueSerde = PluggableSerdes.create(serdeClass.toString(),
                        PluggableSerdes.configs(p.get("serde_config"),
                                deployment), false,
                        "computation '" + spec.id() + "', source '" + streamId + "'");
                this.valueSerdeClass = serdeClass.toString();
                this.converter = new RecordConverter(schema, "stream '" + streamId + "'");
            } else {
                this.valueSerde = null;
                this.valueSerdeClass = null;
                this.converter = null;
            }
            this.json = !"avro".equals(String.valueOf(p.getOrDefault("format", "json")));
            this.keyColumn = p.containsKey("key_column") ? String.valueOf(p.get("key_column")) : null;
            String strategyColumn = spec.watermarkStrategy().timestampColumn();
            this.timestampColumn = strategyColumn != null ? strategyColumn
                    : p.containsKey("event_timestamp_column") ? String.valueOf(p.get("event_timestamp_column")) : null;
            this.timestampUnitNanos = unitNanos(String.valueOf(p.getOrDefault("event_timestamp_unit", "ms")));
            this.keyExtractor = spec.readsKeyedSource() ? keyCodec.extractor(spec.groupBySchema(), schema) : null;
        } else {
            this.keyExtractor = null;
            this.json = false;
            this.keyColumn = null;
            this.timestampColumn = null;
            this.timestampUnitNanos = 1;
            this.partitionFilter = null;
            this.valueSerde = null;
            this.valueSerdeClass = null;
            this.converter = null;
        }
    }

    /** Closes the source's value_serde, if any. */
    public void close() {
        if (valueSerde != null) {
            valueSerde.close();
        }
    }

    /**
     * Decodes one record: an internal stream's message with its metadata headers, or a source record with its
     * event timestamp, message id (from its topic, partition and offset) and, for a keyed source, its key.
     *
     * @throws RuntimeException when the record cannot be read (its input then goes to the dead-letter topic)
     */
    public FlowMessage decode(Record<byte[], byte[]> record, RecordMetadata md) {
        if (source == null) {
            FlowHeaders.Metadata meta = FlowHeaders.read(record.headers());
            GenericRecord key = keyCodec.decode(record.key());
            GenericRecord payload = payloadCodec.decode(record.value());
            return new FlowMessage(meta.messageId(), meta.eventTimestamp(), meta.systemTimestamp(), streamId,
                    key, payload, meta.parents());
        }
        String invalidTimestamp = RecordTimestampExtractor.invalid(
                record.headers().lastHeader(RecordTimestampExtractor.INVALID));
        if (invalidTimestamp != null) {
            throw new IllegalArgumentException("record timestamp " + invalidTimestamp + " is invalid (none, or before "
                    + "1970); source '" + streamId + "' needs a record timestamp from 0 (CreateTime or LogAppendTime)");
        }
        if (record.value() == null) {
            throw new IllegalArgumentException("record value is null (a tombstone); source '" + streamId
                    + "' expects a " + (valueSerde != null ? "record of value_serde " + valueSerdeClass
                            : json ? "JSON object" : "Avro record"));
        }
        GenericRecord payload;
        if (valueSerde != null) {
            Object read = valueSerde.deserializer().deserialize(md.topic(), record.headers(), record.value());
            if (!(read instanceof GenericRecord r)) {
                throw new IllegalArgumentException("value_serde " + valueSerdeClass + " of source '"
                        + streamId + "' read " + (read == null ? "null" : "a " + read.getClass().getName())
                        + ", not a GenericRecord");
            }
            payload = converter.convert(r);
        } else {
            payload = json ? JsonRecords.fromJson(record.value(), schema) : payloadCodec.decode(record.value());
        }
        if (keyColumn != null) {
            if (record.key() == null) {
                throw new IllegalArgumentException("record key is null, but source '" + streamId
                        + "' has key_column '" + keyColumn + "' and needs a key");
            }
            ((GenericData.Record) payload).put(keyColumn, new String(record.key(), StandardCharsets.UTF_8));
        }
        long ets;
        if (timestampColumn != null) {
            Object v = payload.get(timestampColumn);
            if (!(v instanceof Number n)) {
                throw new IllegalArgumentException("event_timestamp_column '" + timestampColumn + "' is "
                        + (v == null ? "null" : "not a number: " + v));
            }
            ets = nanos(n.longValue(), timestampUnitNanos, "event_timestamp_column '" + timestampColumn + "'");
        } else {
            ets = nanos(record.timestamp(), 1_000_000L, "record timestamp");
        }
        if (md.partition() != originPartition) {
            origin = MessageIds.origin(md.topic(), md.partition());
            originPartition = md.partition();
        }
        MessageId id = MessageIds.source(origin, md.offset());
        long sts = nanos(record.timestamp(), 1_000_000L, "record timestamp");
        GenericRecord key = keyExtractor == null ? keyCodec.emptyKey() : keyExtractor.key(payload);
        return new FlowMessage(id, ets, sts, streamId, key, payload, List.of());
    }

    /** {@code value} units in nanoseconds; a value out of that range would wrap to a moment centuries away. */
    private static long nanos(long value, long unitNanos, String what) {
        try {
            return Math.multiplyExact(value, unitNanos);
        } catch (ArithmeticException e) {
            String unit = unitNanos == 1 ? "ns" : unitNanos == 1_000L ? "us" : unitNanos == 1_000_000L ? "ms" : "s";
            throw new IllegalArgumentException(what + " " + value + " " + unit + " does not fit in a long of "
                    + "nanoseconds (it is after the year 2262 or before 1678): fix the producer's timestamps");
        }
    }

    private static long unitNanos(String unit) {
        return switch (unit) {
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            default -> throw new IllegalArgumentException("event_timestamp_unit must be one of ns, us, ms, s but was " + unit);
        };
    }
}
