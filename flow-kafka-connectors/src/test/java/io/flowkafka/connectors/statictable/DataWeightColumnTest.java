package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * {@link DataWeightColumn}. Reference 001: "By default, the message weight for the max_data_weight
 * limit equals the message size; the optional data_weight_column (type int64 or uint64,
 * non-negative values) sets a custom weight, and a null in it means the message size."
 */
class DataWeightColumnTest {
    static final Schema SCHEMA = SchemaBuilder.record("Event").fields().optionalLong("weight")
            .requiredString("name").endRecord();

    private static GenericRecord event(Long weight) {
        GenericRecord r = new GenericData.Record(SCHEMA);
        r.put("weight", weight);
        r.put("name", "e");
        return r;
    }

    @Test
    void shouldUseTheMessageSizeByDefault() {
        assertThat(DataWeightColumn.of(SCHEMA, null).weightOf(event(7L), 120)).isEqualTo(120);
    }

    @Test
    void shouldUseTheColumnAndTheMessageSizeForANull() {
        DataWeightColumn w = DataWeightColumn.of(SCHEMA, "weight");
        assertThat(w.weightOf(event(7L), 120)).isEqualTo(7);
        assertThat(w.weightOf(event(null), 120)).isEqualTo(120);
    }

    @Test
    void shouldRejectANegativeWeightAndANonInt64Column() {
        assertThatThrownBy(() -> DataWeightColumn.of(SCHEMA, "weight").weightOf(event(-1L), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-negative values but held -1");
        assertThatThrownBy(() -> DataWeightColumn.of(SCHEMA, "name")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be int64");
        assertThatThrownBy(() -> DataWeightColumn.of(SCHEMA, "size")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a field of Event");
    }
}
