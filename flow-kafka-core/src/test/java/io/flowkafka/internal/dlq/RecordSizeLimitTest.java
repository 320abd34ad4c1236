package io.flowkafka.internal.dlq;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.AbstractRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

/** The record size flow-kafka checks state rows and outputs against, as Kafka's producer checks it. */
class RecordSizeLimitTest {
    /** Kafka's own estimate, as {@code KafkaProducer.doSend} computes it before {@code ensureValidRecordSize}. */
    private static int kafka(byte[] key, byte[] value, Header... headers) {
        return AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE, CompressionType.LZ4, key,
                value, headers);
    }

    @Test
    void shouldBoundARecordAsKafkasProducerDoes() {
        byte[] none = null;
        for (int keyLength : new int[] {-1, 0, 1, 63, 64, 8191, 8192, 1_048_000}) {
            for (int valueLength : new int[] {-1, 0, 100, 16_383, 16_384, 2_000_000}) {
                byte[] key = keyLength < 0 ? none : new byte[keyLength];
                byte[] value = valueLength < 0 ? none : new byte[valueLength];
                assertThat(RecordSizeLimit.sizeUpperBound(key, value, null)).as(keyLength + "/" + valueLength)
                        .isEqualTo(kafka(key, value));
                Header[] headers = {new RecordHeader("flow.meta", new byte[40]), new RecordHeader("é-ключ", null),
                    new RecordHeader("\uD83D\uDE00", new byte[200])};
                assertThat(RecordSizeLimit.sizeUpperBound(key, value, List.of(headers)))
                        .as(keyLength + "/" + valueLength + " with headers").isEqualTo(kafka(key, value, headers));
            }
        }
    }

    @Test
    void shouldTakeTheProducersMaxRequestSizePrefixedFirst() {
        assertThat(RecordSizeLimit.of(Map.of()).maxRequestSize()).isEqualTo(1_048_576);
        assertThat(RecordSizeLimit.of(Map.of("max.request.size", "5000")).maxRequestSize()).isEqualTo(5000);
        assertThat(RecordSizeLimit.of(Map.of("max.request.size", 5000, "producer.max.request.size", " 7000"))
                .maxRequestSize()).isEqualTo(7000);
        RecordSizeLimit byBuffer = RecordSizeLimit.of(Map.of("producer.max.request.size", "9000",
                "producer.buffer.memory", "4000"));
        assertThat(byBuffer.maxRequestSize()).as("the producer refuses a record larger than its buffer").isEqualTo(4000);
        assertThat(byBuffer.setting()).isEqualTo("buffer.memory");
        assertThat(byBuffer.describe()).isEqualTo("the producer's buffer.memory of 4000 bytes");
        assertThat(RecordSizeLimit.of(Map.of("buffer.memory", 4000)).setting()).isEqualTo("buffer.memory");
        assertThat(RecordSizeLimit.of(Map.of()).setting()).isEqualTo("max.request.size");
    }

    @Test
    void shouldLetThroughExactlyWhatFits() {
        RecordSizeLimit limit = RecordSizeLimit.of(Map.of("producer.max.request.size", 1000));
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        int fitting = 0;
        for (int n = 800; n <= 1000; n++) {
            boolean fits = limit.fits(key, new byte[n], null);
            assertThat(fits).as(n + " bytes").isEqualTo(kafka(key, new byte[n]) <= 1000);
            fitting += fits ? 1 : 0;
        }
        assertThat(fitting).as("the boundary lies inside the range").isBetween(1, 200);
        for (int n = 800; n <= 1000; n++) {
            assertThat(limit.surelyFits(key.length, n)).as("by lengths, " + n + " bytes")
                    .isEqualTo(limit.fits(key, new byte[n], null));
        }
        assertThat(limit.tooLarge("state 's'", key, new byte[2000], null))
                .isEqualTo("state 's' would be a record of " + kafka(key, new byte[2000]) + " bytes (a 1-byte key, a "
                        + "2000-byte value), more than the producer's max.request.size of 1000 bytes: it can never be "
                        + "written");
    }
}
