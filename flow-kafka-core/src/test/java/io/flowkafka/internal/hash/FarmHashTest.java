package io.flowkafka.internal.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.Hashing;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;

/** Golden values from YTsaurus' query-engine tests, as listed in reference/farm-hash.md. */
class FarmHashTest {

    @Test
    void shouldMatchGuavaFingerprintOfHello() {
        assertThat(Hashing.farmHashFingerprint64().hashString("hello", StandardCharsets.UTF_8).asLong())
                .isEqualTo(0xb48be5a931380ce8L);
        assertThat(FarmHash.hashValue("hello")).isEqualTo(0xb48be5a931380ce8L);
    }

    @Test
    void shouldHashAbcLikeYtsaurus() {
        assertThat(FarmHash.farmHash("abc")).isEqualTo(0x7b15151e28709746L);
    }

    @Test
    void shouldHashKeyLikeYtsaurus() {
        assertThat(FarmHash.farmHash("key")).isEqualTo(0x407e25082fdedf2cL);
    }

    @Test
    void shouldHashMsg17LikeYtsaurus() {
        assertThat(FarmHash.farmHash("msg-17")).isEqualTo(0x463ef428a4ff1c4dL);
    }

    @Test
    void shouldHashStringAndUint64LikeYtsaurus() {
        assertThat(FarmHash.farmHash("alpha", 7L)).isEqualTo(0x269c2b99970a5b3dL);
    }

    @Test
    void shouldHashNullAndUint64LikeYtsaurus() {
        assertThat(FarmHash.farmHash(null, 7L)).isEqualTo(0xf03df45b1975b535L);
    }

    @Test
    void shouldHashMixedRowInOrderLikeYtsaurus() {
        assertThat(FarmHash.farmHash(-7L, 11L, true, "xy")).isEqualTo(0x5f90424776524127L);
        assertThat(FarmHash.farmHash("xy", true, 11L, -7L)).isEqualTo(0xfd2435eda17206d9L);
    }

    @Test
    void shouldHashInt64MinusOneAndUint64MaxAlike() {
        assertThat(FarmHash.farmHash(-1L)).isEqualTo(0x62f280995c3dea58L);
        long uint64Max = -1L; // 2^64-1 as the long with the same 64 bits
        assertThat(FarmHash.farmHash(uint64Max)).isEqualTo(0x62f280995c3dea58L);
    }

    @Test
    void shouldHashRepeatedColumnLikeYtsaurus() {
        assertThat(FarmHash.farmHash(-1L, -1L)).isEqualTo(0x940af1fb538b6bd5L);
    }

    @Test
    void shouldHashEmbeddedNulByteLikeYtsaurus() {
        String value = "a\0b";
        assertThat(value.getBytes(StandardCharsets.UTF_8)).hasSize(3);
        assertThat(FarmHash.farmHash(value)).isEqualTo(0x0706e84ffa9edd01L);
    }

    @Test
    void shouldHashEmptyStringLikeYtsaurus() {
        assertThat(FarmHash.farmHash("")).isEqualTo(0xfcc22541f5657d35L);
    }

    @Test
    void shouldHashSingleNullLikeYtsaurus() {
        assertThat(FarmHash.farmHash((Object) null)).isEqualTo(0x2e03bcb5a0233a41L);
        assertThat(FarmHash.farmHash(Arrays.asList((Object) null))).isEqualTo(0x2e03bcb5a0233a41L);
    }

    @Test
    void shouldGiveSameResultForListAndVarargs() {
        assertThat(FarmHash.farmHash(List.of(-7L, 11L, true, "xy"))).isEqualTo(0x5f90424776524127L);
        assertThat(FarmHash.farmHash(Arrays.asList(null, 7L))).isEqualTo(0xf03df45b1975b535L);
    }

    @Test
    void shouldHashIntegerAsInt64AndUtf8AsString() {
        assertThat(FarmHash.hashValue(-7)).isEqualTo(FarmHash.hashValue(-7L));
        assertThat(FarmHash.hashValue(new Utf8("msg-17"))).isEqualTo(FarmHash.hashValue("msg-17"));
        assertThat(FarmHash.hashValue("msg-17".getBytes(StandardCharsets.UTF_8))).isEqualTo(FarmHash.hashValue("msg-17"));
        ByteBuffer buffer = ByteBuffer.wrap("msg-17".getBytes(StandardCharsets.UTF_8));
        assertThat(FarmHash.hashValue(buffer)).isEqualTo(FarmHash.hashValue("msg-17"));
        assertThat(buffer.position()).isZero();
    }

    @Test
    void shouldHashDoubleAsItsBitsAndBooleanAsZeroOrOne() {
        assertThat(FarmHash.hashValue(1.5d)).isEqualTo(FarmHash.fp64(Double.doubleToRawLongBits(1.5d)));
        assertThat(FarmHash.hashValue(1.5f)).isEqualTo(FarmHash.hashValue(1.5d));
        assertThat(FarmHash.hashValue(true)).isEqualTo(FarmHash.fp64(1));
        assertThat(FarmHash.hashValue(false)).isEqualTo(FarmHash.fp64(0));
        assertThat(FarmHash.hashValue(null)).isEqualTo(FarmHash.fp64(0));
    }

    @Test
    void shouldRejectUnsupportedValueType() {
        assertThatThrownBy(() -> FarmHash.hashValue(List.of(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("farm_hash cannot hash a value of type")
                .hasMessageContaining("use a string");
    }
}
