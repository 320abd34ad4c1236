package io.flowkafka.internal.visitor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reference 000's names / external_names rules, on in-memory stores. */
class ScanSourcesTest {
    private static final Schema ROW = SchemaBuilder.record("Row").fields().requiredString("v").endRecord();
    private KeyValueStore<Bytes, byte[]> states;
    private KeyValueStore<Bytes, byte[]> table;

    @BeforeEach
    void open() {
        states = store("c.state");
        table = store("external.t");
        put(1, "internal_only", "total");
        put(2, "managed_only", "/managed");
        put(3, "both", "total", "/managed");
        table.put(Bytes.wrap(key(4, "table_only")), new byte[] {1});
        table.put(Bytes.wrap(key(3, "both")), new byte[] {1});
    }

    private static KeyValueStore<Bytes, byte[]> store(String name) {
        KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return s;
    }

    private static byte[] key(long hash, String name) {
        return ByteBuffer.allocate(8 + name.length()).putLong(hash << 56).put(name.getBytes()).array();
    }

    private void put(long hash, String name, String... stateNames) {
        for (String s : stateNames) {
            states.put(KeyStates.storeKey(key(hash, name), s), new byte[] {1});
        }
    }

    private static ComputationSpec spec(KeyVisitorStreamSpec v) {
        return ComputationSpec.builder("c").groupBy("hash", ColumnType.UINT64, null).groupBy("k", ColumnType.STRING, null)
                .state("total").externalStateManager(ExternalStateManagerSpec.of("/managed", ROW))
                .externalStateJoiner(ExternalStateJoinerSpec.of("/joined")).keyVisitorStream(v).build();
    }

    private List<String> scan(KeyVisitorStreamSpec.Builder v) {
        KeyVisitorStreamSpec visitor = v.build();
        List<ScanSource> sources = ScanSources.of(spec(visitor), visitor, states,
                name -> name.equals("/joined") ? table : null);
        List<String> visited = new ArrayList<>();
        KeyVisitor kv = new KeyVisitor("c", visitor.id(), 0, 1, 1, sources, store("cov"), new io.flowkafka.internal
                .status.StatusBoard());
        kv.step(0, io.flowkafka.spec.KeyVisitorSettings.DEFAULTS.with(Map.of("period", "1s"), "t"), false, 1000,
                System.nanoTime() + 60_000_000_000L, (k, pass, ets, rows) -> visited.add(new String(k, 8, k.length - 8)));
        kv.step(2_000_000_000L, io.flowkafka.spec.KeyVisitorSettings.DEFAULTS.with(Map.of("period", "1s"), "t"), false,
                1000, System.nanoTime() + 60_000_000_000L,
                (k, pass, ets, rows) -> visited.add(new String(k, 8, k.length - 8)));
        return visited;
    }

    @Test
    void shouldScanEveryInternalStateButNoExternalStateWhenNeitherNamesNorExternalNamesAreGiven() {
        // "If neither names nor external_names is specified, all internal states are scanned, but external state and
        // joiners aren't"
        assertThat(scan(KeyVisitorStreamSpec.builder("v"))).containsExactly("internal_only", "both");
    }

    @Test
    void shouldScanOnlyTheListedExternalStateWhenOnlyExternalNamesIsGiven() {
        // "If only external_names is specified (without names), only the listed external state is scanned; internal
        // states aren't scanned."
        assertThat(scan(KeyVisitorStreamSpec.builder("v").externalNames("/managed")))
                .containsExactly("managed_only", "both");
    }

    @Test
    void shouldScanAJoinerOnlyWhenListedAndVisitATableKeyWithoutState() {
        // "a joiner is scanned only if explicitly listed in external_names"; "a visit arrives even for a key that
        // isn't yet in the computation's own state"
        assertThat(scan(KeyVisitorStreamSpec.builder("v").externalNames("/joined")))
                .containsExactly("both", "table_only");
        assertThat(scan(KeyVisitorStreamSpec.builder("v").names("total")))
                .containsExactly("internal_only", "both");
    }

    @Test
    void shouldMergeNamesManagersAndJoinersInKeyOrderVisitingEachKeyOnce() {
        assertThat(scan(KeyVisitorStreamSpec.builder("v").names("total").externalNames("/managed", "/joined")))
                .containsExactly("internal_only", "managed_only", "both", "table_only");
    }

    @Test
    void shouldRefuseAnExternalNameThatIsNoManagerOrJoinerOfTheComputation() {
        KeyVisitorStreamSpec v = KeyVisitorStreamSpec.builder("v").externalNames("/nobody").build();
        assertThatThrownBy(() -> ScanSources.of(spec(v), v, states, name -> null))
                .hasMessageContaining("'/nobody'").hasMessageContaining("no external state manager or joiner");
    }
}
