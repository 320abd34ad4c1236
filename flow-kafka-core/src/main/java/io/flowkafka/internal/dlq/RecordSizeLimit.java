package io.flowkafka.internal.dlq;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.StreamsConfig;
import org.jspecify.annotations.Nullable;

/**
 * The largest record Kafka Streams' producer sends: {@code max.request.size}, against Kafka's own upper bound of
 * the size of a record in a batch of its own. The producer refuses a larger record before sending it, whatever the
 * compression, and under exactly-once that refusal aborts the task's transaction; on the replay the same record is
 * refused again. flow-kafka checks each state row and each output to a topic where it builds them, so such a record
 * fails only the call that writes it: its input goes to the dead-letter topic with the reason, and the pipeline
 * goes on without a restart of the task.
 *
 * <p>The bound is the one {@code KafkaProducer} applies (Kafka's {@code DefaultRecordBatch} and
 * {@code DefaultRecord} size estimate, an internal API since Kafka 4.4, so repeated here): a batch header of 61
 * bytes, at most 21 bytes of record framing, and the varint-prefixed key, value and headers.
 */
public final class RecordSizeLimit {
    static final int BATCH_OVERHEAD = 61;
    static final int MAX_RECORD_OVERHEAD = 21;
    static final int DEFAULT_MAX_REQUEST_SIZE = 1_048_576;
    static final long DEFAULT_BUFFER_MEMORY = 33_554_432L;

    private final int maxRequestSize;
    /** The producer setting the limit comes from. */
    private final String setting;

    RecordSizeLimit(int maxRequestSize, String setting) {
        this.maxRequestSize = maxRequestSize;
        this.setting = setting;
    }

    /** The producer setting the limit comes from: {@code max.request.size}, or {@code buffer.memory} if smaller. */
    public String setting() {
        return setting;
    }

    /**
     * How to raise the limit: {@code raise producer.max.request.size and the broker's message.max.bytes together}
     * (with {@code producer.buffer.memory} too when that is the limit).
     */
    public String raiseAdvice() {
        return "raise producer." + setting + (setting.equals(ProducerConfig.MAX_REQUEST_SIZE_CONFIG) ? ""
                : " and producer." + ProducerConfig.MAX_REQUEST_SIZE_CONFIG) + " and the broker's message.max.bytes "
                + "together";
    }

    /** The limit as a phrase: {@code the producer's max.request.size of N bytes}. */
    public String describe() {
        return "the producer's " + setting + " of " + maxRequestSize + " bytes";
    }

    /**
     * The limit of the Kafka Streams producers configured by {@code configs}: {@code producer.max.request.size}, else
     * {@code max.request.size}, else Kafka's default (1 MiB).
     */
    public static RecordSizeLimit of(Map<String, ?> configs) {
        long maxRequest = producerSetting(configs, ProducerConfig.MAX_REQUEST_SIZE_CONFIG, DEFAULT_MAX_REQUEST_SIZE);
        // the producer also refuses a record larger than its whole buffer
        long buffer = producerSetting(configs, ProducerConfig.BUFFER_MEMORY_CONFIG, DEFAULT_BUFFER_MEMORY);
        return new RecordSizeLimit((int) Math.min(Integer.MAX_VALUE, Math.min(maxRequest, buffer)),
                buffer < maxRequest ? ProducerConfig.BUFFER_MEMORY_CONFIG : ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
    }

    /**
     * A setting of Kafka Streams' producers: {@code producer.<name>}, else {@code <name>}, else {@code fallback}.
     */
    public static long producerSetting(Map<?, ?> configs, String name, long fallback) {
        Object v = configs.get(StreamsConfig.producerPrefix(name));
        if (v == null) {
            v = configs.get(name);
        }
        if (v == null) {
            return fallback;
        }
        return v instanceof Number n ? n.longValue() : Long.parseLong(v.toString().trim());
    }

    /** The largest record the producer sends: its {@code max.request.size}, or its {@code buffer.memory} if smaller. */
    public int maxRequestSize() {
        return maxRequestSize;
    }

    /** Whether the producer sends this record. */
    public boolean fits(byte @Nullable [] key, byte @Nullable [] value, @Nullable Iterable<Header> headers) {
        return sizeUpperBound(key, value, headers) <= maxRequestSize;
    }

    /**
     * Whether the producer surely sends a record without headers whose key and value have at most these lengths: a
     * check that needs no bytes, for rows that are encoded only when this says no.
     */
    public boolean surelyFits(int keyLength, int valueLength) {
        long size = BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + varintSize(keyLength) + (long) keyLength
                + varintSize(valueLength) + valueLength + varintSize(0);
        return size <= maxRequestSize;
    }

    /** Kafka's upper bound of the size of this record in a batch of its own, as the producer checks it. */
    public static int sizeUpperBound(byte @Nullable [] key, byte @Nullable [] value, @Nullable Iterable<Header> headers) {
        long size = BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + bytesSize(key) + bytesSize(value);
        int count = 0;
        long headerBytes = 0;
        if (headers != null) {
            for (Header h : headers) {
                count++;
                int keyLength = utf8Length(h.key());
                headerBytes += varintSize(keyLength) + keyLength + bytesSize(h.value());
            }
        }
        size += varintSize(count) + headerBytes;
        return (int) Math.min(Integer.MAX_VALUE, size);
    }

    /** The UTF-8 length of {@code s}, without encoding it (a header key's size on every output). */
    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) { // as Kafka's Utils.utf8Length counts it
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static int bytesSize(byte @Nullable [] b) {
        return b == null ? varintSize(-1) : varintSize(b.length) + b.length;
    }

    /** The size of Kafka's zig-zag varint of {@code value}. */
    static int varintSize(int value) {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xffffff80) != 0) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    /**
     * The reason a record does not fit, for the dead-letter topic.
     *
     * @param what what the record is, e.g. {@code "this output to topic t"}
     */
    public String tooLarge(String what, byte @Nullable [] key, byte @Nullable [] value,
            @Nullable Iterable<Header> headers) {
        return what + " would be a record of " + sizeUpperBound(key, value, headers) + " bytes (a "
                + (key == null ? 0 : key.length) + "-byte key, a " + (value == null ? 0 : value.length)
                + "-byte value), more than " + describe() + ": it can never be written";
    }
}
