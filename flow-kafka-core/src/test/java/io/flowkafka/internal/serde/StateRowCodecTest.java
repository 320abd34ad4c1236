package io.flowkafka.internal.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * State rows carry their writer schema's fingerprint (Avro's single-object encoding), so a row written before a
 * state's schema changed is read with schema resolution, and a row written before rows carried it still reads.
 */
class StateRowCodecTest {
    private static final Schema V1 = SchemaBuilder.record("Total").namespace("test.rows").fields()
            .requiredLong("count").endRecord();
    /** V1 with a field added with a default. */
    private static final Schema V2 = SchemaBuilder.record("Total").namespace("test.rows").fields()
            .requiredLong("count").name("last").type().stringType().stringDefault("none").endRecord();
    /** V1 with the field's type changed to one that cannot read a long. */
    private static final Schema V3 = SchemaBuilder.record("Total").namespace("test.rows").fields()
            .requiredInt("count").endRecord();

    private static GenericRecord total(Schema schema, long count) {
        GenericRecord r = new GenericData.Record(schema);
        r.put("count", count);
        if (schema.getField("last") != null) {
            r.put("last", "x");
        }
        return r;
    }

    @Test
    void shouldWriteTheSingleObjectHeaderAndReadTheRowBack() {
        StateRowCodec codec = new StateRowCodec(V1);
        byte[] row = codec.encode(total(V1, 7));
        assertThat(row[0]).isEqualTo((byte) 0xC3);
        assertThat(row[1]).isEqualTo((byte) 0x01);
        assertThat(StateRowCodec.fingerprintOf(row)).isEqualTo(StateSchemas.fingerprint(V1));
        assertThat(row).hasSize(StateRowCodec.HEADER + new AvroCodec(V1).encode(total(V1, 7)).length);
        assertThat(codec.decode(row).get("count")).isEqualTo(7L);
    }

    @Test
    void shouldReadARowOfAnEarlierSchemaWithResolution() {
        byte[] old = new StateRowCodec(V1).encode(total(V1, 41)); // registers V1, as the schema topic would
        GenericRecord read = new StateRowCodec(V2).decode(old);
        assertThat(read.get("count")).isEqualTo(41L);
        assertThat(read.get("last").toString()).as("the new field's default").isEqualTo("none");
        // and the reverse: an instance still on V1 reads a V2 row, ignoring the new field
        assertThat(new StateRowCodec(V1).decode(new StateRowCodec(V2).encode(total(V2, 5))).get("count")).isEqualTo(5L);
    }

    @Test
    void shouldReadAPlainAvroRowWrittenBeforeRowsCarriedTheirSchema() {
        byte[] legacy = new AvroCodec(V1).encode(total(V1, 3));
        assertThat(new StateRowCodec(V1).decode(legacy).get("count")).isEqualTo(3L);
    }

    @Test
    void shouldSayWhenARowWasWrittenWithASchemaThisInstanceDoesNotKnow() {
        byte[] row = new StateRowCodec(V1).encode(total(V1, 9));
        row[5] ^= 0x5A; // another fingerprint, known nowhere
        assertThatThrownBy(() -> new StateRowCodec(V1).decode(row)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema fingerprint").hasMessageContaining("a newer version of the pipeline");
    }

    @Test
    void shouldRefuseToResolveARowTheCurrentSchemaCannotRead() {
        byte[] old = new StateRowCodec(V1).encode(total(V1, 1L << 40));
        assertThatThrownBy(() -> new StateRowCodec(V3).decode(old)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be read with the current one");
    }
}
