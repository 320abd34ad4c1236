package io.flowkafka.internal.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.junit.jupiter.api.Test;

class RecordConverterTest {
    private static final Schema ADDRESS = SchemaBuilder.record("Address").namespace("stream").fields()
            .requiredString("city").endRecord();
    private static final Schema STREAM = SchemaBuilder.record("Event").namespace("stream").fields()
            .requiredString("user").requiredLong("n").optionalString("note")
            .name("address").type(ADDRESS).noDefault()
            .name("tags").type().array().items().stringType().arrayDefault(List.of())
            .endRecord();

    private static final Schema WRITER_ADDRESS = SchemaBuilder.record("Addr").namespace("producer").fields()
            .requiredString("zip").requiredString("city").endRecord();
    /** Another name, another field order, an int where the stream has a long, an extra field, no tags. */
    private static final Schema WRITER = SchemaBuilder.record("OrderPlaced").namespace("com.acme").fields()
            .name("address").type(WRITER_ADDRESS).noDefault()
            .requiredInt("n").requiredString("extra").requiredString("user").optionalString("note")
            .endRecord();

    @Test
    void shouldConvertByFieldNameAtEveryLevel() {
        GenericRecord in = new GenericRecordBuilder(WRITER)
                .set("address", new GenericRecordBuilder(WRITER_ADDRESS).set("zip", "1000").set("city", "Oslo").build())
                .set("n", 7).set("extra", "dropped").set("user", "alice").set("note", null).build();

        GenericData.Record out = new RecordConverter(STREAM, "stream 'events'").convert(in);

        assertThat(out.getSchema()).isEqualTo(STREAM);
        assertThat(out.get("user").toString()).isEqualTo("alice");
        assertThat(out.get("n")).isEqualTo(7L);
        assertThat(out.get("note")).isNull();
        assertThat(((GenericRecord) out.get("address")).getSchema()).isEqualTo(ADDRESS);
        assertThat(((GenericRecord) out.get("address")).get("city").toString()).isEqualTo("Oslo");
        assertThat((List<?>) out.get("tags")).as("missing, but with a default").isEmpty();
        assertThat(GenericData.get().validate(STREAM, out)).isTrue();
    }

    @Test
    void shouldReturnARecordOfTheStreamsSchemaUnchanged() {
        GenericData.Record same = new GenericRecordBuilder(STREAM).set("user", "a").set("n", 1L)
                .set("address", new GenericRecordBuilder(ADDRESS).set("city", "x").build()).build();

        assertThat(new RecordConverter(STREAM, "stream 'events'").convert(same)).isSameAs(same);
    }

    @Test
    void shouldNameEveryMissingFieldWithoutDefault() {
        Schema lacking = SchemaBuilder.record("Thin").namespace("com.acme").fields().requiredString("extra")
                .endRecord();

        assertThatThrownBy(() -> new RecordConverter(STREAM, "stream 'events'")
                .convert(new GenericRecordBuilder(lacking).set("extra", "x").build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema com.acme.Thin, which lacks fields [user, n, address] of stream 'events' "
                        + "(schema stream.Event) without a default")
                .hasMessageContaining("add them to the writer's schema");
    }

    @Test
    void shouldRejectAValueThatDoesNotConvert() {
        Schema stringN = SchemaBuilder.record("S").fields().requiredString("user").requiredString("n")
                .name("address").type(WRITER_ADDRESS).noDefault().endRecord();
        GenericRecord in = new GenericRecordBuilder(stringN).set("user", "a").set("n", "seven")
                .set("address", new GenericRecordBuilder(WRITER_ADDRESS).set("zip", "1").set("city", "c").build())
                .build();

        assertThatThrownBy(() -> new RecordConverter(STREAM, "stream 'events'").convert(in))
                .hasMessageContaining("field 'n' holds a String (seven), which does not convert to the long that "
                        + "stream 'events' declares");
    }
}
