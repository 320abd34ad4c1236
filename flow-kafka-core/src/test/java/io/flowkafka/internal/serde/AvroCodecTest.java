package io.flowkafka.internal.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;

/** {@link AvroCodec}'s field-by-field encoding of flat schemas against {@link GenericDatumWriter}. */
class AvroCodecTest {
    private static final Schema NULL_FIRST_STRING = SchemaBuilder.unionOf().nullType().and().stringType().endUnion();
    private static final Schema FLAT = SchemaBuilder.record("Flat").fields()
            .requiredString("s").optionalString("os")
            .name("ns").type(SchemaBuilder.unionOf().stringType().and().nullType().endUnion()).noDefault()
            .name("ns0").type(NULL_FIRST_STRING).noDefault()
            .requiredInt("i").optionalInt("oi")
            .requiredLong("l").optionalLong("ol")
            .requiredFloat("f").optionalFloat("of")
            .requiredDouble("d").optionalDouble("od")
            .requiredBoolean("b").optionalBoolean("ob")
            .endRecord();

    private static byte[] generic(Schema schema, GenericRecord r) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder e = EncoderFactory.get().directBinaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(schema, GenericData.get()).write(r, e);
        return out.toByteArray();
    }

    private static String string(Random random) {
        StringBuilder b = new StringBuilder();
        int n = random.nextInt(6);
        for (int i = 0; i < n; i++) {
            b.append(random.nextBoolean() ? (char) ('a' + random.nextInt(26)) : (char) (0x80 + random.nextInt(0x700)));
        }
        return b.toString();
    }

    @Test
    void flatRecordsEncodeAsTheGenericWriterDoes() throws IOException {
        Random random = new Random(11);
        AvroCodec codec = new AvroCodec(FLAT);
        for (int n = 0; n < 2000; n++) {
            GenericData.Record r = new GenericData.Record(FLAT);
            r.put("s", random.nextBoolean() ? string(random) : new Utf8(string(random)));
            r.put("os", random.nextBoolean() ? null : string(random));
            r.put("ns", random.nextBoolean() ? null : string(random));
            r.put("ns0", random.nextBoolean() ? null : new Utf8(string(random)));
            r.put("i", random.nextInt());
            r.put("oi", random.nextBoolean() ? null : random.nextInt(100) - 50);
            r.put("l", random.nextLong());
            r.put("ol", random.nextBoolean() ? null : (long) random.nextInt());
            r.put("f", random.nextFloat());
            r.put("of", random.nextBoolean() ? null : Float.NaN);
            r.put("d", random.nextDouble() * 1e9);
            r.put("od", random.nextBoolean() ? null : -random.nextDouble());
            r.put("b", random.nextBoolean());
            r.put("ob", random.nextBoolean() ? null : random.nextBoolean());
            byte[] encoded = codec.encode(r);
            assertThat(encoded).isEqualTo(generic(FLAT, r));
            assertSameRecord(codec.decode(encoded), genericRead(FLAT, encoded));
        }
    }

    private static GenericRecord genericRead(Schema schema, byte[] bytes) throws IOException {
        return new GenericDatumReader<GenericRecord>(schema, schema, GenericData.get())
                .read(null, DecoderFactory.get().binaryDecoder(bytes, null));
    }

    /** Equal values of the same classes (Utf8, boxed numbers), field by field. */
    private static void assertSameRecord(GenericRecord actual, GenericRecord expected) {
        assertThat(actual.getClass()).isEqualTo(expected.getClass());
        assertThat(actual.getSchema()).isSameAs(expected.getSchema());
        for (Schema.Field f : expected.getSchema().getFields()) {
            Object a = actual.get(f.pos());
            Object e = expected.get(f.pos());
            assertThat(a == null ? null : a.getClass()).as(f.name()).isEqualTo(e == null ? null : e.getClass());
            assertThat(a).as(f.name()).isEqualTo(e);
        }
    }

    @Test
    void bytesTheFieldByFieldReadCannotTakeFailAsBefore() {
        Schema schema = SchemaBuilder.record("R").fields().optionalLong("ol").requiredString("s").endRecord();
        AvroCodec codec = new AvroCodec(schema);
        assertThatThrownBy(() -> codec.decode(new byte[] {4, 2, 'a'})) // union index 2
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bytes are not Avro of schema R (3 bytes): ");
        assertThatThrownBy(() -> codec.decode(new byte[] {0, 2, 'a', 7})) // trailing byte
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bytes are not Avro of schema R: 4 bytes, trailing data after the record");
        assertThatThrownBy(() -> codec.decode(new byte[] {0, 4, 'a'})) // too short
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bytes are not Avro of schema R (3 bytes): ");
        assertThat(codec.decode(new byte[] {0, 2, 'a'}).toString()).isEqualTo("{\"ol\": null, \"s\": \"a\"}");
    }

    @Test
    void javaStringFieldsDecodeAsTheReaderDoes() throws IOException {
        Schema javaString = SchemaBuilder.builder().stringBuilder().prop("avro.java.string", "String").endString();
        Schema schema = SchemaBuilder.record("P").fields().name("s").type(javaString).noDefault()
                .name("os").type(Schema.createUnion(Schema.create(Schema.Type.NULL), javaString)).withDefault(null)
                .requiredString("u").endRecord();
        AvroCodec codec = new AvroCodec(schema);
        assertThat(codec.flat()).isTrue();
        for (String os : new String[] {null, "y"}) {
            GenericData.Record r = new GenericData.Record(schema);
            r.put("s", "x");
            r.put("os", os);
            r.put("u", "z");
            byte[] encoded = codec.encode(r);
            assertThat(encoded).isEqualTo(generic(schema, r));
            GenericRecord decoded = codec.decode(encoded);
            assertSameRecord(decoded, genericRead(schema, encoded));
            assertThat(decoded.get("s")).isInstanceOf(String.class);
            assertThat(decoded.get("u")).isInstanceOf(Utf8.class);
        }
    }

    @Test
    void otherPropertiesDecodeThroughTheReader() throws IOException {
        Schema tagged = SchemaBuilder.builder().stringBuilder().prop("avro.java.string", "String").prop("x", "y")
                .endString();
        Schema schema = SchemaBuilder.record("Q").fields().name("s").type(tagged).noDefault().endRecord();
        AvroCodec codec = new AvroCodec(schema);
        assertThat(codec.flat()).isFalse();
        GenericData.Record r = new GenericData.Record(schema);
        r.put("s", "x");
        byte[] encoded = codec.encode(r);
        assertSameRecord(codec.decode(encoded), genericRead(schema, encoded));
    }

    @Test
    void valuesOfOtherClassesGoThroughTheGenericWriter() throws IOException {
        Schema schema = SchemaBuilder.record("R").fields().requiredLong("l").requiredString("s").optionalLong("ol")
                .endRecord();
        AvroCodec codec = new AvroCodec(schema);
        GenericData.Record r = new GenericData.Record(schema);
        r.put("l", 7); // an Integer in a long field: the generic writer takes any Number
        r.put("s", new StringBuilder("sb")); // any CharSequence
        r.put("ol", 9L);
        assertThat(codec.encode(r)).isEqualTo(generic(schema, r));

        r.put("ol", 9); // an Integer in a nullable long: no union branch matches
        assertThatThrownBy(() -> codec.encode(r)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("cannot encode a record as Avro schema R: ");
        r.put("ol", null);
        r.put("s", null); // null in a required field
        assertThatThrownBy(() -> codec.encode(r)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("cannot encode a record as Avro schema R: ");
        r.put("s", "x");
        assertThat(codec.encode(r)).isEqualTo(generic(schema, r)); // the codec is still usable
    }

    @Test
    void logicalTypesAndNestedSchemasUseTheGenericWriter() throws IOException {
        Schema ts = LogicalTypes.timestampMillis().addToSchema(Schema.create(Schema.Type.LONG));
        Schema inner = SchemaBuilder.record("Inner").fields().requiredInt("x").endRecord();
        Schema schema = SchemaBuilder.record("L").fields().name("t").type(ts).noDefault()
                .name("inner").type(inner).noDefault().name("tags").type().array().items().stringType().noDefault()
                .endRecord();
        AvroCodec codec = new AvroCodec(schema);
        GenericData.Record in = new GenericData.Record(inner);
        in.put("x", 3);
        GenericData.Record r = new GenericData.Record(schema);
        r.put("t", 1_767_225_600_000L);
        r.put("inner", in);
        r.put("tags", java.util.List.of("a", "b"));
        byte[] encoded = codec.encode(r);
        assertThat(encoded).isEqualTo(generic(schema, r));
        assertThat(codec.decode(encoded).toString()).isEqualTo(r.toString());
    }
}
