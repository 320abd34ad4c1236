package io.flowkafka.avro;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

class FlowAvroClassesTest {
    @Test
    void shouldRoundTripEveryGeneratedRecordOnlyOnceTrusted() throws Exception {
        TimerValue timer = TimerValue.newBuilder().setMessageId(ByteBuffer.wrap(new byte[] {1, 2}))
                .setKey(ByteBuffer.wrap(new byte[] {3})).setStreamId("t").setTriggerTimestamp(10)
                .setEventTimestamp(9).setSystemTimestamp(8).setParentIds(List.of()).build();
        // Avro 1.12.2 refuses untrusted generated classes: this is the rule users must not meet
        assertThatThrownBy(() -> roundTrip(timer)).hasMessageContaining("io.flowkafka.avro");

        FlowAvroClasses.trust();
        FlowAvroClasses.trust(); // idempotent
        assertThat(roundTrip(timer)).isEqualTo(timer);
        ControlRecord control = ControlRecord.newBuilder().setComputation("c").setPartition(3)
                .setEventWatermark(5).setSystemWatermark(6).setCompleted(true).setSequence(7).build();
        assertThat(roundTrip(control)).isEqualTo(control);
        KeyVisitorCoverage coverage = KeyVisitorCoverage.newBuilder().setVisitorStream("v").setPass(1)
                .setPassStartNanos(2).setBucketCount(2).setNextBucket(1)
                .setPositions(java.util.List.of(ByteBuffer.wrap(new byte[0]), ByteBuffer.wrap(new byte[] {7})))
                .setBucketsDone(java.util.List.of(false, true)).build();
        assertThat(roundTrip(coverage)).isEqualTo(coverage);
        OutboxEnvelope envelope = OutboxEnvelope.newBuilder().setMessageId(ByteBuffer.wrap(new byte[] {9}))
                .setStreamId("s").setEventTimestamp(1).setSystemTimestamp(2).setPayload(ByteBuffer.wrap(new byte[] {4}))
                .build();
        assertThat(roundTrip(envelope)).isEqualTo(envelope);
        SinkProgress progress = SinkProgress.newBuilder().setSink("k").setOutboxPartition(0).setNextOffset(42).build();
        assertThat(roundTrip(progress)).isEqualTo(progress);
        BatchedInput batched = BatchedInput.newBuilder().setTopic("p.events").setPartition(1).setOffset(7)
                .setTimestamp(11).setKey(ByteBuffer.wrap(new byte[] {1})).setValue(ByteBuffer.wrap(new byte[] {2}))
                .setMeta(ByteBuffer.wrap(new byte[] {3})).build();
        assertThat(roundTrip(batched)).isEqualTo(batched);
    }

    @SuppressWarnings("unchecked")
    private static <T extends SpecificRecord> T roundTrip(T record) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        new SpecificDatumWriter<T>(record.getSchema()).write(record, enc);
        SpecificDatumReader<T> reader = new SpecificDatumReader<>((Class<T>) record.getClass());
        return reader.read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
    }
}
