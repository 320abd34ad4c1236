package io.flowkafka.internal.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.avro.BatchedInput;
import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.StateRowCodec;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * A state read as a generated class shares the row layout of the generic accessor: the fingerprint first, rows of an
 * earlier schema resolved, plain rows from before read as they are.
 */
class SpecificStateCodecTest {
    static {
        FlowAvroClasses.trust(); // as the runtime does: Avro reads only trusted generated classes
    }

    private static BatchedInput input(long offset) {
        return BatchedInput.newBuilder().setTopic("t").setPartition(1).setOffset(offset).setTimestamp(5L).build();
    }

    private static GenericRecord generic(Schema schema, long offset) {
        GenericRecord r = new GenericData.Record(schema);
        r.put("topic", "t");
        r.put("partition", 1);
        r.put("offset", offset);
        r.put("timestamp", 5L);
        return r;
    }

    @Test
    void shouldReadRowsTheGenericAccessorWroteAndItsOwn() {
        SpecificStateCodec<BatchedInput> codec = new SpecificStateCodec<>(BatchedInput.class);
        byte[] own = codec.encode(input(3));
        assertThat(StateRowCodec.hasHeader(own)).isTrue();
        assertThat(codec.decode(own).getOffset()).isEqualTo(3L);
        assertThat(new StateRowCodec(BatchedInput.getClassSchema()).decode(own).get("offset")).isEqualTo(3L);
        byte[] generic = new StateRowCodec(BatchedInput.getClassSchema()).encode(generic(BatchedInput.getClassSchema(), 4));
        assertThat(codec.decode(generic).getOffset()).isEqualTo(4L);
        byte[] plain = new AvroCodec(BatchedInput.getClassSchema()).encode(generic(BatchedInput.getClassSchema(), 6));
        assertThat(codec.decode(plain).getOffset()).as("a row from before rows carried the fingerprint").isEqualTo(6L);
    }

    @Test
    void shouldResolveARowOfAnEarlierSchema() {
        // the class's schema without its optional fields: an earlier version of it
        Schema earlier = SchemaBuilder.record("BatchedInput").namespace("io.flowkafka.avro").fields()
                .requiredString("topic").requiredInt("partition").requiredLong("offset").requiredLong("timestamp")
                .endRecord();
        byte[] old = new StateRowCodec(earlier).encode(generic(earlier, 9));
        BatchedInput read = new SpecificStateCodec<>(BatchedInput.class).decode(old);
        assertThat(read.getOffset()).isEqualTo(9L);
        assertThat(read.getKey()).as("a field added with its default").isNull();
    }
}
