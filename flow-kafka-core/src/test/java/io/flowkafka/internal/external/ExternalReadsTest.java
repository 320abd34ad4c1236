package io.flowkafka.internal.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The lookups of a call: one version per call, and the cache's staleness bound. */
class ExternalReadsTest {
    private static final Schema ROW = SchemaBuilder.record("R").fields().requiredString("v").endRecord();

    /** A versioned table in memory: version -> key -> value, and a pointer. */
    private static final class Versions implements TableSource {
        final Map<String, Map<Bytes, byte[]>> rows = new HashMap<>();
        @Nullable String pointer;
        int reads;

        void put(String version, byte[] key, String value) {
            rows.computeIfAbsent(version, v -> new HashMap<>()).put(Bytes.wrap(key), value.getBytes());
        }

        @Override
        public TableView pin() {
            String v = pointer;
            return new TableView() {
                @Override
                public byte @Nullable [] get(byte[] encodedKey) {
                    reads++;
                    return v == null ? null : rows.getOrDefault(v, Map.of()).get(Bytes.wrap(encodedKey));
                }

                @Override
                public KeyValueIterator<Bytes, byte[]> scan(long fromHash, long toHash) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public @Nullable String version() {
                    return v;
                }
            };
        }
    }

    private static final byte[] A = {0, 0, 0, 0, 0, 0, 0, 1};
    private static final byte[] B = {0, 0, 0, 0, 0, 0, 0, 2};

    private static ExternalReads reads(Versions table, @Nullable Duration ttl, AtomicLong clock) {
        ExternalPlan.Read read = new ExternalPlan.Read("/t", false, "test", "t", true, ROW, ttl);
        return new ExternalReads(Map.of("/t", read), r -> table, clock::get);
    }

    private static String s(byte @Nullable [] b) {
        return b == null ? null : new String(b);
    }

    @Test
    void aCallReadsOneVersionEvenWhenThePointerSwitchesDuringIt() {
        Versions table = new Versions();
        table.put("v1", A, "a1");
        table.put("v1", B, "b1");
        table.put("v2", A, "a2");
        table.put("v2", B, "b2");
        table.pointer = "v1";
        ExternalReads reads = reads(table, null, new AtomicLong());
        reads.beginCall();
        assertThat(s(reads.lookup("/t", A))).isEqualTo("a1");
        table.pointer = "v2";
        assertThat(s(reads.lookup("/t", B))).as("the call pinned v1 at its first lookup").isEqualTo("b1");
        reads.beginCall();
        assertThat(s(reads.lookup("/t", B))).as("the next call reads the new version").isEqualTo("b2");
    }

    @Test
    void aCachedRowIsServedForLessThanTheTtlAndNeverAcrossVersions() {
        Versions table = new Versions();
        table.put("v1", A, "old");
        table.pointer = "v1";
        AtomicLong clock = new AtomicLong(1_000);
        Duration ttl = Duration.ofSeconds(5);
        ExternalReads reads = reads(table, ttl, clock);
        reads.beginCall();
        assertThat(s(reads.lookup("/t", A))).isEqualTo("old");
        table.put("v1", A, "new");
        clock.addAndGet(ttl.toNanos() - 1);
        reads.beginCall();
        assertThat(s(reads.lookup("/t", A))).as("within the TTL").isEqualTo("old");
        assertThat(table.reads).isEqualTo(1);
        clock.addAndGet(1);
        reads.beginCall();
        assertThat(s(reads.lookup("/t", A))).as("at the TTL the row is read again").isEqualTo("new");
        table.put("v2", A, "v2row");
        table.pointer = "v2";
        reads.beginCall();
        assertThat(s(reads.lookup("/t", A))).as("a cached row of another version is not served").isEqualTo("v2row");
    }

    @Test
    void theCacheIsBounded() {
        RowCache cache = new RowCache(Long.MAX_VALUE, 3);
        Versions table = new Versions();
        TableView view = table.pin();
        for (int i = 0; i < 10; i++) {
            cache.get(view, new byte[] {0, 0, 0, 0, 0, 0, 0, (byte) i}, 0);
        }
        assertThat(cache.size()).isEqualTo(3);
    }
}
