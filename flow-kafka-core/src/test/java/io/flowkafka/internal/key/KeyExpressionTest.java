package io.flowkafka.internal.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.hash.FarmHash;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;

class KeyExpressionTest {
    private static final Schema SCHEMA = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("key")
            .requiredLong("number")
            .requiredInt("small")
            .requiredDouble("ratio")
            .requiredFloat("weight")
            .requiredBoolean("flag")
            .optionalString("region")
            .optionalLong("maybe")
            .name("tags").type().array().items().stringType().noDefault()
            .name("payload").type().bytesType().noDefault()
            .endRecord();

    private static GenericRecord event(String key, long number) {
        GenericData.Record r = new GenericData.Record(SCHEMA);
        r.put("key", new Utf8(key));
        r.put("number", number);
        r.put("small", -3);
        r.put("ratio", 0.25d);
        r.put("weight", 1.5f);
        r.put("flag", true);
        r.put("region", null);
        r.put("maybe", null);
        r.put("tags", java.util.List.of());
        r.put("payload", java.nio.ByteBuffer.allocate(0));
        return r;
    }

    @Test
    void shouldEvaluateFarmHashLikeYtsaurus() {
        KeyExpression e = KeyExpression.parse("farm_hash(key, number)", SCHEMA);
        assertThat(e.resultType()).isEqualTo(ColumnType.UINT64);
        assertThat(e.evaluate(event("alpha", 7))).isEqualTo(0x269c2b99970a5b3dL);
        assertThat(KeyExpression.parse("farm_hash(key)", SCHEMA).evaluate(event("abc", 0)))
                .isEqualTo(0x7b15151e28709746L);
    }

    @Test
    void shouldHashNullColumnAsYtsaurusNull() {
        KeyExpression e = KeyExpression.parse("farm_hash(region, number)", SCHEMA);
        assertThat(e.evaluate(event("x", 7))).isEqualTo(0xf03df45b1975b535L);
    }

    @Test
    void shouldAcceptWhitespaceAndUpperCaseFunctionName() {
        KeyExpression e = KeyExpression.parse("  FARM_HASH ( key ,number )  ", SCHEMA);
        assertThat(e.evaluate(event("alpha", 7))).isEqualTo(0x269c2b99970a5b3dL);
        assertThat(e.columns()).containsExactly("key", "number");
    }

    @Test
    void shouldAcceptNestedFarmHash() {
        KeyExpression e = KeyExpression.parse("farm_hash(farm_hash(key), small)", SCHEMA);
        assertThat(e.evaluate(event("k", 0))).isEqualTo(FarmHash.farmHash(FarmHash.farmHash("k"), -3L));
    }

    @Test
    void shouldEvaluatePlainColumnsToJavaTypes() {
        GenericRecord r = event("alpha", 7);
        assertThat(KeyExpression.parse("key", SCHEMA).evaluate(r)).isEqualTo("alpha");
        assertThat(KeyExpression.parse("number", SCHEMA).evaluate(r)).isEqualTo(7L);
        assertThat(KeyExpression.parse("small", SCHEMA).evaluate(r)).isEqualTo(-3L);
        assertThat(KeyExpression.parse("ratio", SCHEMA).evaluate(r)).isEqualTo(0.25d);
        assertThat(KeyExpression.parse("weight", SCHEMA).evaluate(r)).isEqualTo(1.5d);
        assertThat(KeyExpression.parse("flag", SCHEMA).evaluate(r)).isEqualTo(true);
        assertThat(KeyExpression.parse("region", SCHEMA).evaluate(r)).isNull();
        r.put("region", "eu");
        assertThat(KeyExpression.parse("region", SCHEMA).evaluate(r)).isEqualTo("eu");
    }

    @Test
    void shouldMapColumnTypes() {
        assertThat(KeyExpression.parse("key", SCHEMA).resultType()).isEqualTo(ColumnType.STRING);
        assertThat(KeyExpression.parse("number", SCHEMA).resultType()).isEqualTo(ColumnType.INT64);
        assertThat(KeyExpression.parse("small", SCHEMA).resultType()).isEqualTo(ColumnType.INT64);
        assertThat(KeyExpression.parse("ratio", SCHEMA).resultType()).isEqualTo(ColumnType.DOUBLE);
        assertThat(KeyExpression.parse("weight", SCHEMA).resultType()).isEqualTo(ColumnType.DOUBLE);
        assertThat(KeyExpression.parse("flag", SCHEMA).resultType()).isEqualTo(ColumnType.BOOLEAN);
        assertThat(KeyExpression.parse("region", SCHEMA).resultType()).isEqualTo(ColumnType.STRING);
        assertThat(KeyExpression.parse("maybe", SCHEMA).resultType()).isEqualTo(ColumnType.INT64);
        assertThat(KeyExpression.parse("maybe", SCHEMA).nullable()).isTrue();
        assertThat(KeyExpression.parse("number", SCHEMA).nullable()).isFalse();
    }

    @Test
    void shouldUseFieldOfColumnNameWhenExpressionIsNull() {
        KeyExpression e = KeyExpression.forColumn(GroupByColumn.of("key", ColumnType.STRING), SCHEMA);
        assertThat(e.evaluate(event("alpha", 1))).isEqualTo("alpha");
        assertThat(e.resultType()).isEqualTo(ColumnType.STRING);
        KeyExpression h = KeyExpression.forColumn(GroupByColumn.of("h", ColumnType.UINT64, "farm_hash(key)"), SCHEMA);
        assertThat(h.resultType()).isEqualTo(ColumnType.UINT64);
    }

    @Test
    void shouldRejectUnknownColumnListingFields() {
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash(user_id)", SCHEMA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'farm_hash(user_id)'")
                .hasMessageContaining("unknown column 'user_id'")
                .hasMessageContaining("[key, number, small, ratio, weight, flag, region, maybe, tags, payload]");
        assertThatThrownBy(() -> KeyExpression.forColumn(GroupByColumn.of("user", ColumnType.STRING), SCHEMA))
                .hasMessageContaining("unknown column 'user'");
    }

    @Test
    void shouldRejectUnknownFunction() {
        assertThatThrownBy(() -> KeyExpression.parse("md5(key)", SCHEMA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown function 'md5'")
                .hasMessageContaining("farm_hash(column, ...)");
    }

    @Test
    void shouldRejectBadSyntaxWithPosition() {
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash(key number)", SCHEMA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad syntax")
                .hasMessageContaining("at position 15")
                .hasMessageContaining("expected ',' or ')' but found 'n'");
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash(key", SCHEMA))
                .hasMessageContaining("at position 14").hasMessageContaining("but found the end");
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash()", SCHEMA))
                .hasMessageContaining("at least one argument");
        assertThatThrownBy(() -> KeyExpression.parse("key extra", SCHEMA))
                .hasMessageContaining("at position 5").hasMessageContaining("expected the end");
        assertThatThrownBy(() -> KeyExpression.parse("", SCHEMA))
                .hasMessageContaining("at position 1").hasMessageContaining("expected a column name");
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash(1)", SCHEMA))
                .hasMessageContaining("at position 11").hasMessageContaining("found '1'");
    }

    @Test
    void shouldRejectUnsupportedColumnTypes() {
        assertThatThrownBy(() -> KeyExpression.parse("farm_hash(tags)", SCHEMA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("column 'tags'")
                .hasMessageContaining("cannot be a key");
        assertThatThrownBy(() -> KeyExpression.parse("payload", SCHEMA))
                .hasMessageContaining("cannot be a key");
    }

    @Test
    void shouldRejectNonRecordSchema() {
        assertThatThrownBy(() -> KeyExpression.parse("key", Schema.create(Schema.Type.STRING)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be an Avro record");
    }

    @Test
    void shouldRejectPayloadWithoutField() {
        Schema other = SchemaBuilder.record("Other").fields().requiredString("x").endRecord();
        GenericData.Record r = new GenericData.Record(other);
        r.put("x", "v");
        assertThatThrownBy(() -> KeyExpression.parse("key", SCHEMA).evaluate(r))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reads field 'key'");
    }
}
