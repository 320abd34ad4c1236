package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.avro.TimerValue;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The hand-written codec is byte for byte Avro's {@code TimerValue}, both ways. */
class TimerValueCodecTest {
    @BeforeAll
    static void trust() {
        FlowAvroClasses.trust();
    }

    private static PendingTimer random(Random r, int parents) {
        byte[] key = new byte[8 + r.nextInt(20)];
        byte[] id = new byte[1 + r.nextInt(30)];
        r.nextBytes(key);
        r.nextBytes(id);
        List<byte[]> ps = new ArrayList<>();
        for (int i = 0; i < parents; i++) {
            byte[] p = new byte[r.nextInt(25)];
            r.nextBytes(p);
            ps.add(p);
        }
        long[] edge = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE, r.nextLong()};
        return new PendingTimer(0, edge[r.nextInt(edge.length)], edge[r.nextInt(edge.length)], r.nextLong(), key, id, ps);
    }

    private static TimerValue avro(PendingTimer t, String stream) {
        return TimerValue.newBuilder().setMessageId(ByteBuffer.wrap(t.messageId())).setKey(ByteBuffer.wrap(t.encodedKey()))
                .setStreamId(stream).setTriggerTimestamp(t.triggerTs()).setEventTimestamp(t.eventTs())
                .setSystemTimestamp(t.systemTs()).setParentIds(t.parentIds().stream().map(ByteBuffer::wrap).toList())
                .build();
    }

    @Test
    void shouldWriteWhatAvroWritesAndReadWhatAvroWrites() throws IOException {
        Random r = new Random(3);
        SpecificDatumWriter<TimerValue> writer = new SpecificDatumWriter<>(TimerValue.class);
        SpecificDatumReader<TimerValue> reader = new SpecificDatumReader<>(TimerValue.class);
        for (int i = 0; i < 500; i++) {
            PendingTimer t = random(r, i % 4);
            String stream = "stream-" + "é".repeat(i % 3);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
            writer.write(avro(t, stream), enc);
            enc.flush();
            byte[] ours = TimerValueCodec.encode(t, stream.getBytes(StandardCharsets.UTF_8));
            assertThat(ours).isEqualTo(out.toByteArray());
            assertThat(TimerValueCodec.sizeBound(t, stream.getBytes(StandardCharsets.UTF_8)))
                    .as("the bound the runtime checks before encoding").isGreaterThanOrEqualTo(ours.length);
            assertThat(TimerValueCodec.decode(0, out.toByteArray())).isEqualTo(t);
            assertThat(reader.read(null, DecoderFactory.get().binaryDecoder(ours, null))).isEqualTo(avro(t, stream));
            assertThat(TimerValueCodec.eventTs(ours)).isEqualTo(t.eventTs());
            assertThat(TimerValueCodec.streamId(ours)).isEqualTo(stream);
        }
    }

    @Test
    void shouldReadArraysWrittenInSeveralBlocks() {
        // count 1, item, count -1 with a byte size, item, end: Avro's blocked array encoding
        byte[] head = TimerValueCodec.encode(new PendingTimer(0, 1, 2, 3, new byte[8], new byte[] {5}, List.of()),
                "s".getBytes(StandardCharsets.UTF_8));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(head, 0, head.length - 1);
        out.writeBytes(new byte[] {2, 2, 9, 1, 4, 2, 8, 0});
        PendingTimer t = TimerValueCodec.decode(0, out.toByteArray());
        assertThat(t.parentIds()).containsExactly(new byte[] {9}, new byte[] {8});
    }

    @Test
    void shouldNameWhatIsWrongWithACorruptValue() {
        assertThatThrownBy(() -> TimerValueCodec.decode(0, new byte[] {40, 1, 2}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is not an Avro TimerValue");
    }
}
