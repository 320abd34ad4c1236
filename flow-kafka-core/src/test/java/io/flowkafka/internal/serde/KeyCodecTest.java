package io.flowkafka.internal.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.hash.FarmHash;
import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
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

/** The group-by key encoding: 8-byte big-endian hash, then the Avro binary of the other columns. */
class KeyCodecTest {
    private static final List<GroupByColumn> COLUMNS = List.of(
            GroupByColumn.of("hash", ColumnType.UINT64, "farm_hash(user, region)"),
            GroupByColumn.of("user", ColumnType.STRING),
            GroupByColumn.of("region", ColumnType.STRING),
            GroupByColumn.of("shard", ColumnType.INT64),
            GroupByColumn.of("weight", ColumnType.DOUBLE),
            GroupByColumn.of("vip", ColumnType.BOOLEAN));
    private static final Schema PAYLOAD = SchemaBuilder.record("Visit").namespace("test").fields()
            .requiredString("user").optionalString("region").requiredLong("shard").requiredDouble("weight")
            .requiredBoolean("vip").requiredString("other").endRecord();

    private static GenericRecord key(KeyCodec codec, long hash, String user, String region, Long shard, Double weight,
            Boolean vip) {
        GenericRecord k = new GenericData.Record(codec.schema());
        k.put("hash", hash);
        k.put("user", user);
        k.put("region", region);
        k.put("shard", shard);
        k.put("weight", weight);
        k.put("vip", vip);
        return k;
    }

    @Test
    void shouldRoundTripKeysOfEveryColumnType() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        for (GenericRecord k : List.of(
                key(codec, 0L, "alice", "eu", 7L, 0.5, true),
                key(codec, -1L, "", "", Long.MIN_VALUE, -0.0, false),
                key(codec, Long.MIN_VALUE, "bob", null, null, null, null),
                key(codec, 42L, "ünïcødé ✓", "日本", Long.MAX_VALUE, Double.MAX_VALUE, true))) {
            byte[] encoded = codec.encode(k);
            assertThat(RangePartitioner.hashOf(encoded)).isEqualTo(k.get("hash"));
            assertThat(codec.decode(encoded)).isEqualTo(k);
            assertThat(codec.encode(codec.decode(encoded))).isEqualTo(encoded);
        }
        assertThat(codec.isEmpty()).isFalse();
        assertThat(codec.schema().getName()).isEqualTo("Key_count");
        assertThat(codec.schema().getField("hash").schema().getType()).isEqualTo(Schema.Type.LONG);
    }

    /**
     * Keys are written and read column by column; the bytes must stay those of the Avro writer (state stores,
     * changelogs and internal topics hold them), and the records those of the Avro reader.
     */
    @Test
    void shouldWriteAndReadTheBytesOfTheAvroCodecs() throws IOException {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        Schema rest = SchemaBuilder.record("Rest").fields()
                .optionalString("user").optionalString("region").optionalLong("shard").optionalDouble("weight")
                .optionalBoolean("vip").endRecord();
        GenericData.setStringType(rest.getField("user").schema().getTypes().get(1), GenericData.StringType.String);
        GenericData.setStringType(rest.getField("region").schema().getTypes().get(1), GenericData.StringType.String);
        GenericDatumWriter<GenericRecord> writer = new GenericDatumWriter<>(rest);
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(rest);
        Random random = new Random(11);
        for (int i = 0; i < 2_000; i++) {
            long hash = random.nextLong();
            Object user = random.nextInt(5) == 0 ? null : random.nextBoolean() ? "ü" + random.nextInt() : new Utf8("u" + i);
            Object region = random.nextInt(3) == 0 ? null : "日本".repeat(random.nextInt(3));
            Object shard = switch (random.nextInt(4)) {
                case 0 -> null;
                case 1 -> random.nextInt(); // an Integer in a long column: the Avro writer refuses it
                default -> random.nextLong() >> random.nextInt(64);
            };
            Object weight = random.nextInt(4) == 0 ? null : random.nextGaussian();
            Object vip = random.nextInt(4) == 0 ? null : random.nextBoolean();
            GenericRecord k = new GenericData.Record(codec.schema());
            k.put("hash", hash);
            k.put("user", user);
            k.put("region", region);
            k.put("shard", shard);
            k.put("weight", weight);
            k.put("vip", vip);
            if (shard instanceof Integer) {
                assertThatThrownBy(() -> codec.encode(k)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("Not in union");
                continue;
            }
            GenericRecord r = new GenericData.Record(rest);
            for (Schema.Field f : rest.getFields()) {
                r.put(f.name(), k.get(f.name()));
            }
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            expected.write(ByteBuffer.allocate(8).putLong(hash).array());
            BinaryEncoder e = EncoderFactory.get().directBinaryEncoder(expected, null);
            writer.write(r, e);

            byte[] encoded = codec.encode(k);
            assertThat(encoded).containsExactly(expected.toByteArray());

            GenericRecord read = reader.read(null, DecoderFactory.get().binaryDecoder(encoded, 8, encoded.length - 8, null));
            GenericRecord decoded = codec.decode(encoded);
            assertThat(decoded.get("hash")).isEqualTo(hash);
            for (Schema.Field f : rest.getFields()) {
                assertThat(decoded.get(f.name())).as(f.name()).isEqualTo(read.get(f.name()));
                if (read.get(f.name()) != null) {
                    assertThat(decoded.get(f.name())).as(f.name()).hasSameClassAs(read.get(f.name()));
                }
            }
        }
        byte[] trailing = Arrays.copyOf(codec.encode(key(codec, 1L, "a", "b", 1L, 1.0, true)), 64);
        assertThatThrownBy(() -> codec.decode(trailing)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trailing data");
    }

    /** A key record of another schema (columns in another order) is encoded by column name, as before. */
    @Test
    void shouldEncodeAKeyOfAnotherSchemaByColumnName() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        Schema reordered = SchemaBuilder.record("Mine").fields().requiredLong("hash").optionalString("region")
                .optionalString("user").optionalLong("shard").optionalDouble("weight").optionalBoolean("vip")
                .endRecord(); // user and region swapped: the same types, so only their names tell them apart
        GenericRecord mine = new GenericData.Record(reordered);
        mine.put("hash", 42L);
        mine.put("vip", true);
        mine.put("weight", 0.5);
        mine.put("shard", 7L);
        mine.put("region", "eu");
        mine.put("user", "alice");
        assertThat(codec.encode(mine)).containsExactly(codec.encode(key(codec, 42L, "alice", "eu", 7L, 0.5, true)));
    }

    /** Before: a payload passed for a key encoded another key's row (or threw a ClassCastException in the encoder). */
    @Test
    void shouldRefuseARecordWithoutTheKeysColumns() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        GenericRecord payload = new GenericData.Record(PAYLOAD);
        payload.put("user", "alice");
        payload.put("shard", 7L);
        payload.put("weight", 0.5);
        payload.put("vip", true);
        payload.put("other", "x");
        assertThatThrownBy(() -> codec.encode(payload)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the record given as a key (fields [user, region, shard, weight, vip, other]) is not a key "
                        + "of computation 'count', whose keys have columns [hash, user, region, shard, weight, vip]: "
                        + "pass message.getKey() (or timer.getKey(), visit.getKey()), not a payload");
        Schema hashFirst = SchemaBuilder.record("Other").fields().requiredLong("shard").requiredString("hash")
                .endRecord();
        GenericRecord wrongHash = new GenericData.Record(hashFirst);
        wrongHash.put("shard", 7L);
        wrongHash.put("hash", "not a number");
        assertThatThrownBy(() -> codec.encode(wrongHash)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a key of computation 'count'");
    }

    @Test
    void shouldEncodeEmptyKeyAsEightZeroBytes() {
        KeyCodec codec = KeyCodec.of(List.of(), "read");
        assertThat(codec.isEmpty()).isTrue();
        assertThat(codec.encode(codec.emptyKey())).containsExactly(new byte[8]);
        assertThat(codec.decode(new byte[8])).isEqualTo(codec.emptyKey());
        assertThat(codec.schema().getFields()).isEmpty();
    }

    @Test
    void shouldSortKeysByHashAsUnsignedBytes() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        Random random = new Random(7);
        List<GenericRecord> keys = new ArrayList<>();
        for (long h : new long[] {0L, 1L, 0xffL, 0x100L, Long.MAX_VALUE, Long.MIN_VALUE, -1L, -2L}) {
            keys.add(key(codec, h, "zzz" + h, "r", 1L, 1.0, true));
        }
        for (int i = 0; i < 2_000; i++) {
            // longer and "larger" other columns must not change the order given by the hash
            keys.add(key(codec, random.nextLong(), "u".repeat(random.nextInt(20)) + i, random.nextBoolean() ? null : "x",
                    random.nextLong(), random.nextDouble(), random.nextBoolean()));
        }
        List<byte[]> byBytes = keys.stream().map(codec::encode).sorted(Arrays::compareUnsigned).toList();
        List<Long> hashesInByteOrder = byBytes.stream().map(RangePartitioner::hashOf).toList();
        assertThat(hashesInByteOrder).isSortedAccordingTo(Long::compareUnsigned);
        assertThat(hashesInByteOrder.get(0)).isZero();
        assertThat(hashesInByteOrder.get(hashesInByteOrder.size() - 1)).isEqualTo(-1L);

        byte[] smallHashLongRest = codec.encode(key(codec, 1L, "zzzzzzzzzzzzzzzz", "zz", Long.MAX_VALUE, 9.0, true));
        byte[] bigHashShortRest = codec.encode(key(codec, Long.MIN_VALUE, "a", null, null, null, null));
        assertThat(Arrays.compareUnsigned(smallHashLongRest, bigHashShortRest)).isNegative();
    }

    @Test
    void shouldComputeKeysFromPayloadsWithGroupByExpressions() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        KeyCodec.Extractor extractor = codec.extractor(COLUMNS, PAYLOAD);
        GenericRecord payload = new GenericData.Record(PAYLOAD);
        payload.put("user", "alice");
        payload.put("region", null);
        payload.put("shard", 3L);
        payload.put("weight", 2.5);
        payload.put("vip", false);
        payload.put("other", "ignored");

        GenericRecord k = extractor.key(payload);
        assertThat(k.get("hash")).isEqualTo(FarmHash.farmHash("alice", null));
        assertThat(k.get("user")).isEqualTo("alice");
        assertThat(k.get("region")).isNull();
        assertThat(k.get("shard")).isEqualTo(3L);
        assertThat(codec.decode(codec.encode(k))).isEqualTo(k);
    }

    @Test
    void shouldRejectKeyShorterThanTheHash() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        assertThatThrownBy(() -> codec.decode(new byte[5]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("record key is 5 bytes")
                .hasMessageContaining("starts with an 8-byte hash");
        assertThatThrownBy(() -> codec.decode(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("record key is null");
    }

    @Test
    void shouldRejectKeyOfAnotherComputation() {
        KeyCodec codec = KeyCodec.of(COLUMNS, "count");
        byte[] other = KeyCodec.of(List.of(GroupByColumn.of("hash", ColumnType.UINT64, "farm_hash(user)"),
                GroupByColumn.of("n", ColumnType.INT64)), "other").encode(keyWithN(5L));
        assertThatThrownBy(() -> codec.decode(other))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bytes are not Avro");
    }

    private static GenericRecord keyWithN(long n) {
        KeyCodec c = KeyCodec.of(List.of(GroupByColumn.of("hash", ColumnType.UINT64, "farm_hash(user)"),
                GroupByColumn.of("n", ColumnType.INT64)), "other");
        GenericRecord k = new GenericData.Record(c.schema());
        k.put("hash", 9L);
        k.put("n", n);
        return k;
    }

    @Test
    void shouldSanitizeComputationIdInSchemaName() {
        assertThat(KeyCodec.of(COLUMNS, "my-computation.v2").schema().getName()).isEqualTo("Key_my_computation_v2");
    }
}
