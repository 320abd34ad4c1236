package io.flowkafka.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.SinkSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** What an async sink gets besides its spec: its input streams' schemas and records, and message system times. */
class SinkContextTest {
    static final Schema ROW = SchemaBuilder.record("Row").namespace("t").fields().requiredString("user")
            .requiredLong("n").endRecord();

    private static SinkContext context(Map<String, Object> parameters) {
        return new SinkContext("p", "p", "c", new SinkSpec("s", "TSomeSink", List.of("rows"), parameters), Map.of(),
                Map.of(), new SimpleMeterRegistry(), "p.dlq", Map.of("rows", ROW));
    }

    @Test
    void shouldDecodeAnOutboxValueInTheSinksFormat() throws Exception {
        GenericRecord row = new GenericData.Record(ROW);
        row.put("user", "u1");
        row.put("n", 7L);
        byte[] json = "{\"user\":\"u1\",\"n\":7}".getBytes(StandardCharsets.UTF_8);
        assertThat(context(Map.of()).decodeValue("rows", json)).isEqualTo(row);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(ROW).write(row, encoder);
        encoder.flush();
        assertThat(context(Map.of("format", "avro")).decodeValue("rows", out.toByteArray())).isEqualTo(row);
    }

    @Test
    void shouldRefuseWhatCannotBeDecodedBackIntoARecord() {
        assertThatThrownBy(() -> context(Map.of("payload_column", "user")).decodeValue("rows", new byte[] {1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload_column");
        assertThatThrownBy(() -> context(Map.of()).decodeValue("other", new byte[] {1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no schema for input stream 'other'");
    }

    @Test
    void shouldKeepTheOldConstructorsWithoutSchemasOrSystemTimestamps() {
        SinkContext old = new SinkContext("p", "p", "c", new SinkSpec("s", "TSomeSink", List.of("rows"), Map.of()),
                Map.of(), Map.of(), new SimpleMeterRegistry());
        assertThat(old.inputSchemas()).isEmpty();
        OutboxRecord r = new OutboxRecord(0, MessageId.of(new byte[] {1}), null, null, new RecordHeaders(), 5);
        assertThat(r.systemTimestamp()).as("unknown").isEqualTo(-1);
    }
}
