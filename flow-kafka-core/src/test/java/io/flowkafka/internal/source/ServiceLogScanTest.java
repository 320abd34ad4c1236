package io.flowkafka.internal.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.spec.SourceSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The service-log scan on in-memory stores: "an infinite source that cycles through the table". */
class ServiceLogScanTest {
    private static final Schema ROW = SchemaBuilder.record("Row").fields().requiredString("name").endRecord();
    private final AvroCodec codec = new AvroCodec(ROW);
    private KeyValueStore<Bytes, byte[]> table;
    private KeyValueStore<Bytes, byte[]> progress;
    /** Emitted rows: cycle -> names, and every message id. */
    private final Map<Long, List<String>> byCycle = new HashMap<>();
    private final List<String> ids = new ArrayList<>();
    /** The hash of every emitted row, in order. */
    private final List<Long> hashes = new ArrayList<>();

    @BeforeEach
    void open() {
        table = store("external.t");
        progress = store("c.service_log_progress");
        Random r = new Random(11);
        for (int i = 0; i < 100; i++) {
            put(r.nextLong(), "row" + i);
        }
    }

    private static KeyValueStore<Bytes, byte[]> store(String name) {
        KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return s;
    }

    private void put(long hash, String name) {
        GenericRecord row = new GenericData.Record(ROW);
        row.put("name", name);
        table.put(Bytes.wrap(ByteBuffer.allocate(8 + name.length()).putLong(hash).put(name.getBytes()).array()),
                codec.encode(row));
    }

    private ServiceLogScan scan(int partition, int partitions, Map<String, Object> parameters) {
        Map<String, Object> p = new HashMap<>(parameters);
        p.put("table", "t");
        SourceSpec source = new SourceSpec("rows", ServiceLogSource.SERVICE_LOG_SOURCE, p);
        return new ServiceLogScan("c", partition, partitions, List.of(new ServiceLogScan.Table(source, "t", ROW, ROW,
                List.of(), "c")), progress, topic -> table, 0);
    }

    private void step(ServiceLogScan scan, long nowMs) {
        scan.step(nowMs, (t, id, key, row, payload, failure, cycle, startMs) -> {
            assertThat(failure).isNull();
            byCycle.computeIfAbsent(cycle, c -> new ArrayList<>()).add(payload.get("name").toString());
            ids.add(id.toString());
            hashes.add(ByteBuffer.wrap(key, 0, 8).getLong());
        });
    }

    @Test
    void shouldEmitEveryRowOncePerCycleInKeyOrderWithinTheRowBoundPerStep() {
        // reference 002: "The service log is an infinite source that cycles through the table."
        ServiceLogScan scan = scan(0, 1, Map.of("max_rows_per_iteration", 30, "min_cycle_duration", "10s"));
        step(scan, 0);
        assertThat(byCycle.get(0L)).hasSize(30);
        for (int i = 1; i <= 3; i++) {
            step(scan, 100 * i);
        }
        assertThat(byCycle.get(0L)).hasSize(100).doesNotHaveDuplicates();
        assertThat(byCycle).doesNotContainKey(1L);
        step(scan, 5_000); // min_cycle_duration: the next cycle starts 10 s after the first
        assertThat(byCycle).doesNotContainKey(1L);
        for (int i = 0; i < 4; i++) {
            step(scan, 10_000 + i);
        }
        assertThat(byCycle.get(1L)).containsExactlyElementsOf(byCycle.get(0L));
        assertThat(ids).hasSize(200).doesNotHaveDuplicates();
        assertThat(hashes.subList(0, 100)).as("key order: by unsigned hash").isSortedAccordingTo(Long::compareUnsigned);
    }

    @Test
    void shouldResumeAfterTheLastCommittedRowWhenRestarted() {
        // "Exactly-once guarantees apply within each cycle": progress lives in the (changelogged) store only
        step(scan(0, 1, Map.of("max_rows_per_iteration", 40)), 0);
        step(scan(0, 1, Map.of("max_rows_per_iteration", 40)), 1); // a new task attempt over the same store
        step(scan(0, 1, Map.of("max_rows_per_iteration", 40)), 2);
        assertThat(byCycle.get(0L)).hasSize(100).doesNotHaveDuplicates();
        assertThat(ids).doesNotHaveDuplicates();
    }

    @Test
    void shouldReadOnlyThePartitionsHashRangeSoPartitionsTogetherReadEachRowOnce() {
        List<String> all = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            progress = store("p" + p);
            byCycle.clear();
            step(scan(p, 3, Map.of()), 0);
            all.addAll(byCycle.getOrDefault(0L, List.of()));
        }
        assertThat(all).hasSize(100).doesNotHaveDuplicates();
    }

    @Test
    void shouldKeepTheRateLimit() {
        ServiceLogScan scan = scan(0, 1, Map.of("max_rows_per_second", 10));
        step(scan, 0);
        assertThat(byCycle.get(0L)).hasSize(10);
        step(scan, 500);
        assertThat(byCycle.get(0L)).hasSize(15);
        step(scan, 2_500);
        assertThat(byCycle.get(0L)).hasSize(25); // the bucket holds one second of rows at most
    }
}
