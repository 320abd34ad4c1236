package io.flowkafka.internal.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** The {@code flow.*} headers carrying message metadata on internal topics. */
class FlowHeadersTest {
    private static final MessageId SOURCE_ID = MessageIds.source(0x12345678, 42L);
    private static final MessageId DERIVED_ID = MessageIds.derive(SOURCE_ID, MessageIds.computationTag("count"), 3);

    @Test
    void shouldRoundTripMetadataWithoutParents() {
        Headers h = FlowHeaders.of(SOURCE_ID, 1_000_000_000L, 2_000_000_000L, List.of());
        FlowHeaders.Metadata m = FlowHeaders.read(h);
        assertThat(m.messageId()).isEqualTo(SOURCE_ID);
        assertThat(m.eventTimestamp()).isEqualTo(1_000_000_000L);
        assertThat(m.systemTimestamp()).isEqualTo(2_000_000_000L);
        assertThat(m.parents()).isEmpty();
        assertThat(h.lastHeader(FlowHeaders.PARENTS)).as("no parents header when there are no parents").isNull();
        assertThat(FlowHeaders.isControl(h)).isFalse();
    }

    @Test
    void shouldRoundTripParentsOfMixedSizes() {
        MessageId tiny = MessageId.of(new byte[] {7});
        MessageId big = MessageId.of(new byte[255]);
        List<MessageId> parents = List.of(DERIVED_ID, SOURCE_ID, tiny, big);
        FlowHeaders.Metadata m = FlowHeaders.read(FlowHeaders.of(DERIVED_ID, -5L, Long.MAX_VALUE, parents));
        assertThat(m.parents()).containsExactlyElementsOf(parents);
        assertThat(m.messageId()).isEqualTo(DERIVED_ID);
        assertThat(m.eventTimestamp()).as("negative event times (before 1970) survive").isEqualTo(-5L);
        assertThat(m.systemTimestamp()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldWriteTimestampsAsEightBytesBigEndian() {
        Headers h = FlowHeaders.of(SOURCE_ID, 0x0102030405060708L, 9L, List.of());
        assertThat(h.lastHeader(FlowHeaders.EVENT_TIMESTAMP).value()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThat(h.lastHeader(FlowHeaders.MESSAGE_ID).value()).isEqualTo(SOURCE_ID.toBytes());
    }

    @Test
    void shouldKeepOtherHeadersAndReadTheLastValue() {
        Headers h = new RecordHeaders();
        h.add("user.header", new byte[] {1});
        FlowHeaders.write(h, SOURCE_ID, 1L, 1L, List.of());
        FlowHeaders.write(h, DERIVED_ID, 2L, 3L, List.of(SOURCE_ID));
        FlowHeaders.Metadata m = FlowHeaders.read(h);
        assertThat(m.messageId()).isEqualTo(DERIVED_ID);
        assertThat(m.eventTimestamp()).isEqualTo(2L);
        assertThat(m.parents()).containsExactly(SOURCE_ID);
        assertThat(h.lastHeader("user.header").value()).containsExactly(1);
    }

    @Test
    void shouldRejectMissingIdHeader() {
        Headers h = FlowHeaders.of(SOURCE_ID, 1L, 2L, List.of());
        h.remove(FlowHeaders.MESSAGE_ID);
        assertThatThrownBy(() -> FlowHeaders.read(h))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("record is not a flow message")
                .hasMessageContaining(FlowHeaders.MESSAGE_ID);
    }

    @Test
    void shouldRejectMissingTimestampHeaders() {
        for (String missing : List.of(FlowHeaders.EVENT_TIMESTAMP, FlowHeaders.SYSTEM_TIMESTAMP)) {
            Headers h = FlowHeaders.of(SOURCE_ID, 1L, 2L, List.of());
            h.remove(missing);
            assertThatThrownBy(() -> FlowHeaders.read(h)).as("without %s", missing)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("record is not a flow message")
                    .hasMessageContaining(missing + " (8 bytes)");
        }
    }

    @Test
    void shouldRejectRecordWithoutHeaders() {
        assertThatThrownBy(() -> FlowHeaders.read(new RecordHeaders()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("headers flow.id, flow.ets (8 bytes) and flow.sts (8 bytes) are required");
    }

    @Test
    void shouldRejectMalformedTimestampHeader() {
        Headers h = FlowHeaders.of(SOURCE_ID, 1L, 2L, List.of());
        h.remove(FlowHeaders.SYSTEM_TIMESTAMP);
        h.add(FlowHeaders.SYSTEM_TIMESTAMP, ByteBuffer.allocate(4).putInt(2).array());
        assertThatThrownBy(() -> FlowHeaders.read(h))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(FlowHeaders.SYSTEM_TIMESTAMP + " (8 bytes)");
    }

    @Test
    void shouldRejectEmptyIdHeader() {
        Headers h = FlowHeaders.of(SOURCE_ID, 1L, 2L, List.of());
        h.remove(FlowHeaders.MESSAGE_ID);
        h.add(FlowHeaders.MESSAGE_ID, new byte[0]);
        assertThatThrownBy(() -> FlowHeaders.read(h))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be empty");
    }

    @Test
    void shouldNotCorruptParentIdLongerThan255Bytes() {
        MessageId big = MessageId.of(new byte[256]);
        Headers h;
        try {
            h = FlowHeaders.of(SOURCE_ID, 1L, 2L, List.of(big, SOURCE_ID));
        } catch (IllegalArgumentException rejected) {
            assertThat(rejected).hasMessageContaining("255");
            return;
        }
        assertThat(FlowHeaders.read(h).parents()).containsExactly(big, SOURCE_ID);
    }

    @Test
    void shouldRecognizeControlRecords() {
        Headers h = new RecordHeaders();
        assertThat(FlowHeaders.isControl(h)).isFalse();
        h.add(FlowHeaders.CONTROL, new byte[0]);
        assertThat(FlowHeaders.isControl(h)).isTrue();
    }
}
