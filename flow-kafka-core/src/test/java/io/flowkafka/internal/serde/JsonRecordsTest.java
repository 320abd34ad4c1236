package io.flowkafka.internal.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** Plain JSON objects to and from Avro records, for {@code json} source and sink topics. */
class JsonRecordsTest {
    private static final Schema ADDRESS = SchemaBuilder.record("Address").namespace("test").fields()
            .requiredString("city").optionalInt("zip").endRecord();
    private static final Schema COLOR = SchemaBuilder.enumeration("Color").namespace("test").symbols("RED", "GREEN");
    private static final Schema ALL = SchemaBuilder.record("All").namespace("test").fields()
            .requiredString("s")
            .requiredInt("i")
            .requiredLong("l")
            .requiredFloat("f")
            .requiredDouble("d")
            .requiredBoolean("b")
            .requiredBytes("raw")
            .name("color").type(COLOR).noDefault()
            .name("tags").type().array().items().stringType().noDefault()
            .name("scores").type().map().values().longType().noDefault()
            .name("address").type(ADDRESS).noDefault()
            .optionalString("nickname")
            .name("level").type().longType().longDefault(3L)
            .endRecord();

    private static GenericRecord sample() {
        GenericData.Record address = new GenericData.Record(ADDRESS);
        address.put("city", "Zürich");
        address.put("zip", 8001);
        GenericData.Record r = new GenericData.Record(ALL);
        r.put("s", "héllo \"quoted\"\n");
        r.put("i", Integer.MIN_VALUE);
        r.put("l", Long.MAX_VALUE);
        r.put("f", 1.5f);
        r.put("d", 0.1);
        r.put("b", true);
        r.put("raw", ByteBuffer.wrap(new byte[] {0, 1, -1, 127}));
        r.put("color", new GenericData.EnumSymbol(COLOR, "GREEN"));
        r.put("tags", new GenericData.Array<>(ALL.getField("tags").schema(), List.of("a", "b")));
        r.put("scores", Map.of("x", 1L));
        r.put("address", address);
        r.put("nickname", null);
        r.put("level", 9L);
        return r;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void shouldRoundTripEveryFieldType() {
        GenericRecord r = sample();
        byte[] json = JsonRecords.toJson(r);
        GenericRecord back = JsonRecords.fromJson(json, ALL);
        assertThat(back).isEqualTo(r);
        assertThat(JsonRecords.toJson(back)).isEqualTo(json);
    }

    @Test
    void shouldWritePlainJsonWithoutUnionWrappers() {
        String json = new String(JsonRecords.toJson(sample()), StandardCharsets.UTF_8);
        assertThat(json).contains("\"nickname\":null", "\"l\":9223372036854775807", "\"raw\":\"AAH/fw==\"",
                "\"color\":\"GREEN\"", "\"tags\":[\"a\",\"b\"]", "\"address\":{\"city\":\"Zürich\",\"zip\":8001}");
        GenericRecord named = sample();
        named.put("nickname", "bob");
        assertThat(new String(JsonRecords.toJson(named), StandardCharsets.UTF_8)).contains("\"nickname\":\"bob\"")
                .doesNotContain("{\"string\"");
    }

    @Test
    void shouldRoundTripRandomRecords() {
        Schema schema = SchemaBuilder.record("Rnd").namespace("test").fields()
                .requiredString("s").requiredLong("l").requiredDouble("d").optionalLong("maybe").endRecord();
        Random random = new Random(11);
        for (int i = 0; i < 500; i++) {
            GenericData.Record r = new GenericData.Record(schema);
            r.put("s", randomString(random));
            r.put("l", random.nextLong());
            r.put("d", random.nextBoolean() ? random.nextDouble() : random.nextGaussian() * 1e300);
            r.put("maybe", random.nextBoolean() ? null : random.nextLong());
            assertThat(JsonRecords.fromJson(JsonRecords.toJson(r), schema)).as("record %s", r).isEqualTo(r);
        }
    }

    private static String randomString(Random random) {
        StringBuilder b = new StringBuilder();
        int n = random.nextInt(12);
        for (int i = 0; i < n; i++) {
            int cp = random.nextInt(4) == 0 ? 0x1F600 + random.nextInt(50) : 0x20 + random.nextInt(0x250);
            b.appendCodePoint(cp);
        }
        return b.toString();
    }

    @Test
    void shouldFillMissingFieldsWithDefaultsAndNulls() {
        Schema schema = SchemaBuilder.record("Sparse").namespace("test").fields()
                .requiredString("id").optionalString("note").name("n").type().longType().longDefault(3L).endRecord();
        GenericRecord r = JsonRecords.fromJson(utf8("{\"id\":\"a\",\"unknown\":[1,2]}"), schema);
        assertThat(r.get("id")).isEqualTo("a");
        assertThat(r.get("note")).isNull();
        assertThat(r.get("n")).isEqualTo(3L);
    }

    @Test
    void shouldRejectValueThatIsNotJson() {
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("not json"), ALL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("value is not JSON: ");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"s\":"), ALL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("value is not JSON: ")
                .hasMessageNotContaining("\n");
    }

    @Test
    void shouldRejectContentAfterTheObject() {
        // newline-delimited objects batched into one record, or trailing garbage: nothing may be dropped silently
        for (String json : List.of("{\"s\":\"a\"}\n{\"s\":\"b\"}", "{\"s\":\"a\"} xyz", "{\"s\":\"a\"}]")) {
            assertThatThrownBy(() -> JsonRecords.fromJson(utf8(json), ALL)).as("value %s", json)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("value is not JSON: ");
        }
        Schema one = SchemaBuilder.record("One").namespace("test").fields().requiredString("s").endRecord();
        assertThat(JsonRecords.fromJson(utf8("{\"s\":\"a\"}\n  "), one).get("s").toString())
                .as("whitespace after it is fine").isEqualTo("a");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"s\":\"a\"}{\"s\":\"b\"}"), one))
                .as("a flat schema too").hasMessageStartingWith("value is not JSON: ");
    }

    @Test
    void shouldRejectJsonThatIsNotAnObject() {
        for (String json : List.of("[1,2]", "42", "\"text\"", "null", "")) {
            assertThatThrownBy(() -> JsonRecords.fromJson(utf8(json), ALL)).as("value %s", json)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a JSON object of schema test.All");
        }
    }

    @Test
    void shouldRejectMissingRequiredFieldNamingIt() {
        Schema schema = SchemaBuilder.record("Click").namespace("test").fields()
                .requiredString("user").requiredLong("ts").endRecord();
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"ts\":1}"), schema))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("field 'Click.user' must be string but was missing");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"user\":\"a\",\"ts\":null}"), schema))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("field 'Click.ts' must be long but was null");
    }

    @Test
    void shouldRejectWrongTypesNamingFieldAndValue() {
        Schema schema = SchemaBuilder.record("Typed").namespace("test").fields()
                .requiredLong("l").requiredInt("i").requiredBoolean("b").name("tags").type().array().items().longType()
                .noDefault().name("nested").type(ADDRESS).noDefault().endRecord();
        String ok = "\"l\":1,\"i\":1,\"b\":true,\"tags\":[1],\"nested\":{\"city\":\"c\"}";
        assertThat(JsonRecords.fromJson(utf8("{" + ok + "}"), schema).get("l")).isEqualTo(1L);
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{" + ok.replace("\"l\":1", "\"l\":1.5") + "}"), schema))
                .hasMessageContaining("field 'Typed.l' must be long but was number 1.5");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{" + ok.replace("\"i\":1", "\"i\":3000000000") + "}"), schema))
                .hasMessageContaining("field 'Typed.i' must be int");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{" + ok.replace("\"b\":true", "\"b\":\"yes\"") + "}"), schema))
                .hasMessageContaining("field 'Typed.b' must be boolean but was string \"yes\"");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{" + ok.replace("[1]", "[1,\"x\"]") + "}"), schema))
                .hasMessageContaining("field 'Typed.tags[1]' must be long");
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{" + ok.replace("{\"city\":\"c\"}", "{}") + "}"), schema))
                .hasMessageContaining("field 'Typed.nested.city' must be string but was missing");
    }

    @Test
    void shouldRejectUnknownEnumSymbolListingTheSymbols() {
        Schema schema = SchemaBuilder.record("E").namespace("test").fields().name("c").type(COLOR).noDefault().endRecord();
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"c\":\"BLUE\"}"), schema))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("field 'E.c' must be one of [RED, GREEN]");
    }

    @Test
    void shouldAbbreviateLongOffendingValues() {
        Schema schema = SchemaBuilder.record("Click").namespace("test").fields().requiredLong("ts").endRecord();
        String longText = "x".repeat(500);
        assertThatThrownBy(() -> JsonRecords.fromJson(utf8("{\"ts\":\"" + longText + "\"}"), schema))
                .hasMessageContaining("...")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(120));
    }

    @Test
    void shouldNameTheFieldThatHoldsAValueOfAnotherType() {
        // first-hour audit: set("count", "5") on a long field failed as a bare ClassCastException naming no field
        Schema counts = SchemaBuilder.record("Counts").namespace("t").fields().requiredString("user")
                .requiredLong("count").endRecord();
        GenericRecord r = new GenericData.Record(counts);
        r.put("user", "alice");
        r.put("count", "5");
        assertThatThrownBy(() -> JsonRecords.toJson(r)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("field 'count' of t.Counts is long, but it holds a String (5); set it to a value of the "
                        + "field's type");
    }

    /** Before: Jackson wrote NaN as the string "NaN", which the reader refused: a sink's output flow-kafka could not read. */
    @Test
    void shouldReadBackTheNonFiniteNumbersItWrites() {
        GenericRecord all = sample();
        all.put("d", Double.NaN);
        all.put("f", Float.POSITIVE_INFINITY);
        byte[] json = JsonRecords.toJson(all);
        assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8)).contains("\"d\":\"NaN\"");
        GenericRecord back = JsonRecords.fromJson(json, ALL);
        assertThat((Double) back.get("d")).isNaN();
        assertThat(back.get("f")).isEqualTo(Float.POSITIVE_INFINITY);

        Schema flat = SchemaBuilder.record("Flat").namespace("test").fields().requiredDouble("x").requiredFloat("y")
                .requiredString("z").endRecord();
        GenericRecord r = new GenericData.Record(flat);
        r.put("x", Double.NEGATIVE_INFINITY);
        r.put("y", Float.NaN);
        r.put("z", "NaN");
        GenericRecord flatBack = JsonRecords.fromJson(JsonRecords.toJson(r), flat);
        assertThat(flatBack.get("x")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat((Float) flatBack.get("y")).isNaN();
        assertThat(flatBack.get("z").toString()).isEqualTo("NaN");

        Schema union = SchemaBuilder.record("U").namespace("test").fields().name("v").type().unionOf().nullType().and()
                .doubleType().and().stringType().endUnion().noDefault().name("w").type().map().values().longType()
                .noDefault().endRecord();
        GenericRecord u = new GenericData.Record(union);
        u.put("v", "NaN");
        u.put("w", Map.of());
        assertThat(JsonRecords.fromJson(JsonRecords.toJson(u), union).get("v").toString())
                .as("a string in a union with a string branch stays a string").isEqualTo("NaN");
    }
}
