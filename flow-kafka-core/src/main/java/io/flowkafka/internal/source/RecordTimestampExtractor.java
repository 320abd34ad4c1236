package io.flowkafka.internal.source;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.jspecify.annotations.Nullable;

/**
 * The runtime's {@code default.timestamp.extractor}: a record's own timestamp, and for one without a valid timestamp
 * (negative: none, or before 1970) the partition's time, with the original value in header {@value #INVALID}. Kafka
 * Streams' default extractor throws there, before any processor runs, which fails the stream thread on the same
 * record after every restart; this way the record reaches its source, which sends it to the dead-letter topic
 * ({@link #invalid}), and the pipeline goes on.
 *
 * <p>Stateless and thread-safe.
 */
public final class RecordTimestampExtractor implements TimestampExtractor {
    /** Header of a record whose timestamp was invalid: the timestamp, as decimal text. */
    public static final String INVALID = "flow.invalid.timestamp";

    @Override
    public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
        long ts = record.timestamp();
        if (ts >= 0) {
            return ts;
        }
        record.headers().add(INVALID, Long.toString(ts).getBytes(StandardCharsets.UTF_8));
        return Math.max(partitionTime, 0L);
    }

    /**
     * The invalid timestamp a record had, or null if it had a valid one.
     *
     * @param header the record's {@value #INVALID} header, or null
     */
    public static @Nullable String invalid(@Nullable Header header) {
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
