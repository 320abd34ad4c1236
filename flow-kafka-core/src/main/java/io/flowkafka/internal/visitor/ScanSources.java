package io.flowkafka.internal.visitor;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * What one key visitor scans: the home of reference 000's {@code names} / {@code external_names} rules.
 *
 * <ol>
 *   <li>{@code names} given: those internal states;</li>
 *   <li>only {@code external_names} given: only the listed external state, no internal state;</li>
 *   <li>neither: every internal state, but no external state (a manager's rows, kept in the state store under the
 *       manager's name, are left out) and no joiner;</li>
 *   <li>a manager listed in {@code external_names} is scanned as the state rows under its name (so {@code clear()}
 *       through the manager deletes the row); a joiner listed is scanned from its table, merged in key order.</li>
 * </ol>
 */
final class ScanSources {
    private ScanSources() {
    }

    /**
     * The scan sources of visitor {@code v} of {@code spec}.
     *
     * @param states the computation's state store; null when it has none
     * @param tables the table store a joiner of the computation reads, by joiner name; null if unavailable
     */
    static List<ScanSource> of(ComputationSpec spec, KeyVisitorStreamSpec v,
            @Nullable KeyValueStore<Bytes, byte[]> states,
            Function<String, @Nullable ReadOnlyKeyValueStore<Bytes, byte[]>> tables) {
        return of(spec, v, states, tables, name -> null);
    }

    /**
     * The scan sources of visitor {@code v} of {@code spec}, a static-table joiner among them.
     *
     * @param states the computation's state store; null when it has none
     * @param tables the table store a joiner of the computation reads, by joiner name; null if unavailable
     * @param staticTables the scan of a {@code TStaticTableKeyVisitorJoiner}, by joiner name; null if unavailable
     */
    static List<ScanSource> of(ComputationSpec spec, KeyVisitorStreamSpec v,
            @Nullable KeyValueStore<Bytes, byte[]> states,
            Function<String, @Nullable ReadOnlyKeyValueStore<Bytes, byte[]>> tables,
            Function<String, @Nullable ScanSource> staticTables) {
        List<String> external = v.externalNames();
        Set<String> stateNames = new LinkedHashSet<>(v.names());
        List<ScanSource> joiners = new ArrayList<>();
        for (String name : external) {
            if (spec.externalStateManagers().containsKey(name)) {
                stateNames.add(name);
            } else if (spec.externalStateJoiners().containsKey(name) && spec.externalStateJoiners().get(name)
                    .className().equals(ExternalStateJoinerSpec.STATIC_TABLE_KEY_VISITOR)) {
                ScanSource table = staticTables.apply(name);
                if (table == null) {
                    throw new IllegalStateException("key visitor '" + v.id() + "' of computation '" + spec.id()
                            + "' scans static-table joiner '" + name + "', but no StaticTableProvider is on the class "
                            + "path (add flow-kafka-connectors)");
                }
                joiners.add(table);
            } else if (spec.externalStateJoiners().containsKey(name)) {
                ReadOnlyKeyValueStore<Bytes, byte[]> table = tables.apply(name);
                if (table == null) {
                    throw new IllegalStateException("key visitor '" + v.id() + "' of computation '" + spec.id()
                            + "' scans joiner '" + name + "', but its table's store is not in the topology");
                }
                joiners.add(new ExternalScanSource(name, table));
            } else {
                throw new IllegalStateException("key visitor '" + v.id() + "' of computation '" + spec.id()
                        + "' lists '" + name + "' in external_names, which is no external state manager or joiner "
                        + "of the computation");
            }
        }
        List<ScanSource> sources = new ArrayList<>();
        if (states != null) {
            if (!stateNames.isEmpty()) {
                sources.add(new StateScanSource(states, List.copyOf(stateNames), Set.of()));
            } else if (external.isEmpty()) {
                // neither names nor external_names: every internal state, no manager's rows
                sources.add(new StateScanSource(states, null, spec.externalStateManagers().keySet()));
            }
        }
        sources.addAll(joiners);
        return sources;
    }
}
