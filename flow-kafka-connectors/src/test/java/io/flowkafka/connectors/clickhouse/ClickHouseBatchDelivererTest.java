package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * {@link ClickHouseBatchDeliverer} on the real ClickHouse 18.16: a replayed batch is a byte-identical block that a
 * ReplicatedMergeTree drops, and the dedup token a newer server gets (reference 002: "insert_deduplication_token
 * equals the batch's maximum MessageId ... with a :<shard name> suffix").
 */
class ClickHouseBatchDelivererTest {
    @Test
    void shouldInsertAReplayedBatchOnlyOnceAfterARestart() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            String table = "deliverer_replay";
            ClickHouseTestServer.createReplicated(ch, table, "mid String, id String, user String, n Int64");
            OutboxBatch first = batch(0, 0, 100);
            OutboxBatch second = batch(100, 100, 100);
            try (ClickHouseBatchDeliverer d = deliverer(Map.of("url", ClickHouseTestServer.url().toString(),
                    "table", table, "message_id_column", "mid"))) {
                d.open(0, java.util.OptionalLong.empty());
                d.deliver(first);
                d.deliver(second);
                assertThat(d.targets().get("").engine()).isEqualTo("ReplicatedMergeTree");
                assertThat(d.targets().get("").warnings()).isEmpty();
            }
            long duplicatesBefore = duplicatedBlocks(ch);
            // a restart whose group offset missed the second batch's commit: the outbox offers it again
            try (ClickHouseBatchDeliverer again = deliverer(Map.of("url", ClickHouseTestServer.url().toString(),
                    "table", table, "message_id_column", "mid"))) {
                again.deliver(second);
            }
            assertThat(ClickHouseTestServer.lines(ch, "SELECT count(), uniqExact(id), uniqExact(mid) FROM default."
                    + table)).containsExactly("200\t200\t200");
            assertThat(duplicatedBlocks(ch)).as("the replay was dropped as a duplicate block")
                    .isEqualTo(duplicatesBefore + 1);
            // the message id of each row is the record's
            assertThat(ClickHouseTestServer.lines(ch, "SELECT mid FROM default." + table + " WHERE id = 'e5'"))
                    .containsExactly(first.records().get(5).messageId().toString());
        }
    }

    @Test
    void shouldStopTheSinkWhenTheTargetIsNotAMergeTree() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ch.query("DROP TABLE IF EXISTS default.deliverer_memory");
            ch.query("CREATE TABLE default.deliverer_memory (id String, user String, n Int64) ENGINE = Memory");
            try (ClickHouseBatchDeliverer d = deliverer(Map.of("url", ClickHouseTestServer.url().toString(),
                    "table", "deliverer_memory"))) {
                assertThatThrownBy(() -> d.deliver(batch(0, 0, 3))).isInstanceOfSatisfying(
                        OutboxDeliveryException.class, e -> assertThat(e.fatal()).isTrue())
                        .hasMessageContaining("Memory").hasMessageContaining("ReplicatedMergeTree");
            }
            assertThat(ClickHouseTestServer.lines(ch, "SELECT count() FROM default.deliverer_memory"))
                    .containsExactly("0");
        }
    }

    @Test
    void shouldSendTheBatchMaximumMessageIdAsTokenWhereTheServerHasIt() {
        OutboxBatch b = new OutboxBatch("ch", 0, List.of(record(10, id(7), 0), record(11, id(9), 1),
                record(12, id(3), 2)), 13);
        String token = b.dedupToken().toString();
        assertThat(token).isEqualTo(id(9).toString()).as("the largest, not the last");
        ServerVersion v24 = ServerVersion.parse("24.8.4.13");
        assertThat(ClickHouseBatchDeliverer.dedupSettings(v24, token, null))
                .containsExactly(Map.entry("insert_deduplication_token", token));
        assertThat(ClickHouseBatchDeliverer.dedupSettings(v24, token, "s2"))
                .containsExactly(Map.entry("insert_deduplication_token", token + ":s2"));
        assertThat(ClickHouseBatchDeliverer.dedupSettings(ServerVersion.parse("18.16.1"), token, "s2")).isEmpty();
        // the request it builds
        try (ClickHouseHttpClient c = new ClickHouseHttpClient(java.net.URI.create("http://ch:8123"), null, null,
                Duration.ofSeconds(1))) {
            assertThat(c.insertUri("`default`.`t`", "JSONEachRow",
                    ClickHouseBatchDeliverer.dedupSettings(v24, token, "s2")).getRawQuery())
                    .startsWith("insert_deduplication_token=" + token + "%3As2&query=INSERT+INTO");
        }
    }

    /** A stream with a {@code bytes} column, written to the outbox as Avro. */
    private static final Schema BYTES = SchemaBuilder.record("B").namespace("test").fields().requiredString("id")
            .requiredBytes("b").endRecord();

    private static ClickHouseBatchDeliverer bytesDeliverer(String sinkClass, Map<String, Object> parameters) {
        Map<String, Object> p = new HashMap<>(parameters);
        p.put("format", "avro");
        SinkSpec sink = new SinkSpec("ch", sinkClass, List.of("events"), p);
        return (ClickHouseBatchDeliverer) new ClickHouseSinkProvider().createDeliverer(new SinkContext("p", "p-app",
                "read", sink, Map.of(), Map.of(), new SimpleMeterRegistry(), "p.dlq", Map.of("events", BYTES)));
    }

    private static OutboxBatch bytesBatch(List<byte[]> values) {
        List<OutboxRecord> records = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            GenericRecord r = new GenericData.Record(BYTES);
            r.put("id", "b" + i);
            r.put("b", ByteBuffer.wrap(values.get(i)));
            records.add(new OutboxRecord(i, id(i), null, new AvroCodec(BYTES).encode(r), new RecordHeaders(), 0L));
        }
        return new OutboxBatch("ch", 0, records, values.size() + 1);
    }

    @Test
    void shouldStoreABytesValueAsItsBytes() throws Exception {
        // a String column takes a JSON string's bytes as they are: not re-encoded as UTF-8 (0xFF would be C3 BF)
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            String table = "deliverer_bytes";
            ClickHouseTestServer.createReplicated(ch, table, "id String, b String");
            try (ClickHouseBatchDeliverer d = bytesDeliverer(ClickHouseSinkProvider.T_BATCHING,
                    Map.of("url", ClickHouseTestServer.url().toString(), "table", table))) {
                d.open(0, java.util.OptionalLong.empty());
                d.deliver(bytesBatch(List.of(new byte[] {(byte) 0xFF, 0x41, 0x22, 0x5C, 0x0A, 0x00, (byte) 0x80})));
            }
            assertThat(ClickHouseTestServer.lines(ch, "SELECT hex(b) FROM default." + table))
                    .containsExactly("FF41225C0A0080");
        }
    }

    @Test
    void shouldSpreadRowsOverTheShardsByABytesShardingKeysContent() throws Exception {
        // distinct 16-byte keys (UUIDs, digests) must not all route alike
        String table = "deliverer_bytes_shards";
        try (ClickHouseHttpClient c1 = ClickHouseTestServer.client();
                ClickHouseHttpClient c2 = new ClickHouseHttpClient(ClickHouseTestServer.url2(), null, null,
                        Duration.ofSeconds(30))) {
            ClickHouseTestServer.createReplicated(c1, table, "id String, b String");
            ClickHouseTestServer.createReplicated(c2, table, "id String, b String");
            java.util.Random random = new java.util.Random(7);
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                byte[] k = new byte[16];
                random.nextBytes(k);
                keys.add(k);
            }
            try (ClickHouseBatchDeliverer d = bytesDeliverer(ClickHouseSinkProvider.T_SHARDED, Map.of("table", table,
                    "shard_hosts", Map.of("s1", ClickHouseTestServer.url().toString(), "s2",
                            ClickHouseTestServer.url2().toString()),
                    "sharding_key", "b"))) {
                d.open(0, java.util.OptionalLong.empty());
                d.deliver(bytesBatch(keys));
            }
            long first = Long.parseLong(ClickHouseTestServer.lines(c1, "SELECT count() FROM default." + table).get(0));
            long second = Long.parseLong(ClickHouseTestServer.lines(c2, "SELECT count() FROM default." + table).get(0));
            assertThat(first + second).isEqualTo(50);
            assertThat(first).as("rows on shard s1").isBetween(10L, 40L);
        }
    }

    @Test
    void shouldRejectAMessageIdColumnThatIsAlsoAField() {
        assertThatThrownBy(() -> deliverer(Map.of("url", "http://ch:8123", "table", "t", "message_id_column",
                "user"))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("message_id_column 'user'");
    }

    static ClickHouseBatchDeliverer deliverer(Map<String, Object> parameters) {
        SinkSpec sink = new SinkSpec("ch", ClickHouseSinkProvider.T_BATCHING, List.of("events"), parameters);
        return (ClickHouseBatchDeliverer) new ClickHouseSinkProvider().createDeliverer(new SinkContext("p", "p-app",
                "read", sink, Map.of(), Map.of(), new SimpleMeterRegistry(), "p.dlq",
                Map.of("events", ClickHouseSinkMain.EVENT)));
    }

    static OutboxBatch batch(long offset, int from, int count) {
        List<OutboxRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(record(offset + i, id(from + i), from + i));
        }
        return new OutboxBatch("ch", 0, records, offset + count + 1);
    }

    static OutboxRecord record(long offset, MessageId id, int n) {
        String json = "{\"id\":\"e" + n + "\",\"user\":\"u" + (n % 7) + "\",\"n\":" + n + "}";
        return new OutboxRecord(offset, id, null, json.getBytes(StandardCharsets.UTF_8), new RecordHeaders(), 0L);
    }

    static MessageId id(long n) {
        return MessageId.of(ByteBuffer.allocate(8).putLong(n).array());
    }

    static long duplicatedBlocks(ClickHouseHttpClient ch) throws Exception {
        String v = ch.query("SELECT sum(value) FROM system.events WHERE event = 'DuplicatedInsertedBlocks'").strip();
        return v.isEmpty() ? 0 : Long.parseLong(v);
    }

    static Map<String, Object> with(Map<String, Object> base, String k, Object v) {
        Map<String, Object> m = new HashMap<>(base);
        m.put(k, v);
        return m;
    }
}
