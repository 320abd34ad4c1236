package io.flowkafka.internal.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The global store of an external table and its reader: lookups, hash-range scans, pinned versions. */
class TableReaderTest {
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> plain;
    private TestInputTopic<byte[], byte[]> versioned;

    @BeforeEach
    void start() {
        Topology topology = new Topology();
        TableStore.addTo(topology, "t", false);
        TableStore.addTo(topology, "v", false);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "table-reader-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        driver = new TopologyTestDriver(topology, p);
        plain = driver.createInputTopic("t", new ByteArraySerializer(), new ByteArraySerializer());
        versioned = driver.createInputTopic("v", new ByteArraySerializer(), new ByteArraySerializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    private TableReader reader(String topic, boolean v) {
        KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(TableStore.storeName(topic));
        return new TableReader(store, topic, v);
    }

    private static byte[] key(long hash, String rest) {
        byte[] r = rest.getBytes(StandardCharsets.UTF_8);
        byte[] k = new byte[8 + r.length];
        for (int i = 0; i < 8; i++) {
            k[i] = (byte) (hash >>> (56 - 8 * i));
        }
        System.arraycopy(r, 0, k, 8, r.length);
        return k;
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> values(KeyValueIterator<Bytes, byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                out.add(new String(kv.value, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void aRowIsReadByItsEncodedKeyAndATombstoneDeletesIt() {
        plain.pipeInput(key(5, "a"), b("one"));
        TableReader r = reader("t", false);
        assertThat(r.get(key(5, "a"))).asString(StandardCharsets.UTF_8).isEqualTo("one");
        plain.pipeInput(key(5, "a"), (byte[]) null);
        assertThat(r.get(key(5, "a"))).isNull();
        assertThat(r.version()).isNull();
    }

    @Test
    void aScanReadsTheRowsOfAnUnsignedHashRangeInKeyOrder() {
        plain.pipeInput(key(1, "a"), b("h1"));
        plain.pipeInput(key(7, "b"), b("h7"));
        plain.pipeInput(key(7, "a"), b("h7a"));
        plain.pipeInput(key(-1L, "z"), b("max"));
        plain.pipeInput(key(Long.MIN_VALUE, "m"), b("mid"));
        TableReader r = reader("t", false);
        assertThat(values(r.scan(2, 7))).containsExactly("h7a", "h7");
        assertThat(values(r.scan(0, Long.MAX_VALUE))).containsExactly("h1", "h7a", "h7");
        assertThat(values(r.scan(Long.MIN_VALUE, -1L))).containsExactly("mid", "max");
        try (KeyValueIterator<Bytes, byte[]> it = r.scan(7, 7)) {
            assertThat(it.next().key.get()).isEqualTo(key(7, "a"));
        }
    }

    @Test
    void aPinnedViewKeepsReadingItsVersionAcrossAPointerSwitch() {
        byte[] v1 = VersionedKeys.checkedVersion("v1");
        byte[] v2 = VersionedKeys.checkedVersion("v2");
        versioned.pipeInput(VersionedKeys.rowKey(v1, key(3, "k")), b("old"));
        versioned.pipeInput(VersionedKeys.rowKey(v2, key(3, "k")), b("new"));
        versioned.pipeInput(VersionedKeys.rowKey(v2, key(4, "k")), b("new4"));
        TableReader r = reader("v", true);
        assertThat(r.get(key(3, "k"))).as("no pointer yet: no version").isNull();
        versioned.pipeInput(VersionedKeys.pointer(), b("v1"));
        TableView pinned = r.pin();
        assertThat(pinned.version()).isEqualTo("v1");
        versioned.pipeInput(VersionedKeys.pointer(), b("v2"));
        assertThat(pinned.get(key(3, "k"))).asString(StandardCharsets.UTF_8).isEqualTo("old");
        assertThat(values(pinned.scan(0, -1L))).containsExactly("old");
        assertThat(r.version()).isEqualTo("v2");
        assertThat(r.get(key(3, "k"))).asString(StandardCharsets.UTF_8).isEqualTo("new");
        assertThat(values(r.scan(0, -1L))).containsExactly("new", "new4");
        assertThat(values(r.scan(4, 4))).containsExactly("new4");
    }

    @Test
    void aVersionNameIsNonEmptyWithoutNul() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> VersionedKeys.checkedVersion(""))
                .hasMessageContaining("non-empty");
        assertThat(VersionedKeys.versionOf(VersionedKeys.rowKey(b("2024-01"), key(1, "")))).isEqualTo("2024-01");
        assertThat(VersionedKeys.versionOf(VersionedKeys.pointer())).isNull();
        assertThat(VersionedKeys.isPointer(VersionedKeys.pointer())).isTrue();
    }
}
