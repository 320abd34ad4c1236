package io.flowkafka.internal.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import java.util.List;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** The packed {@code flow.meta} header carrying message metadata on internal topics. */
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
        assertThat(h.toArray()).as("one header per message").hasSize(1);
        assertThat(h.lastHeader(FlowHeaders.META).value()).as("16 bytes of timestamps, 1 length byte, the id")
                .hasSize(16 + 1 + SOURCE_ID.size());
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
        byte[] meta = h.lastHeader(FlowHeaders.META).value();
        assertThat(java.util.Arrays.copyOfRange(meta, 0, 8)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThat(java.util.Arrays.copyOfRange(meta, 8, 16)).containsExactly(0, 0, 0, 0, 0, 0, 0, 9);
        assertThat(meta[16]).as("id length").isEqualTo((byte) SOURCE_ID.size());
        assertThat(java.util.Arrays.copyOfRange(meta, 17, meta.length)).isEqualTo(SOURCE_ID.toBytes());
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
    void shouldRejectRecordWithoutMetadataHeader() {
        assertThatThrownBy(() -> FlowHeaders.read(new RecordHeaders()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("record is not a flow message: header flow.meta")
                .hasMessageContaining("is required");
    }

    @Test
    void shouldRejectTruncatedMetadata() {
        byte[] full = FlowHeaders.encode(SOURCE_ID, 1L, 2L, List.of(DERIVED_ID));
        for (int cut : new int[] {0, 8, 16, 17, full.length - 1}) {
            Headers h = new RecordHeaders();
            h.add(FlowHeaders.META, java.util.Arrays.copyOf(full, cut));
            assertThatThrownBy(() -> FlowHeaders.read(h)).as("cut at %d", cut)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("flow.meta");
        }
    }

    @Test
    void shouldRejectEmptyId() {
        byte[] meta = new byte[17];
        Headers h = new RecordHeaders();
        h.add(FlowHeaders.META, meta);
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
