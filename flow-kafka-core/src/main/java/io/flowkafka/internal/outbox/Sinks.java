package io.flowkafka.internal.outbox;

import io.flowkafka.spi.SinkProvider;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/**
 * The sink classes the runtime knows: the built-in synchronous {@code KafkaSink}, and the async
 * sinks of every {@link SinkProvider} on the class path ({@link ServiceLoader}, loaded once).
 */
public final class Sinks {
    /** The built-in same-cluster sink, written inside the epoch transaction. */
    public static final String SYNC_KAFKA_SINK = "KafkaSink";

    private static volatile @Nullable Map<String, SinkProvider> providers;

    private Sinks() {
    }

    /** The provider of an async sink class, or null (built-in or unknown). */
    public static @Nullable SinkProvider provider(String sinkClassName) {
        return providers().get(sinkClassName);
    }

    /** Whether a sink class is delivered through the outbox. */
    public static boolean isAsync(String sinkClassName) {
        return provider(sinkClassName) != null;
    }

    /** Every known sink class name: the built-in one first, then the providers' in load order. */
    public static List<String> knownSinkClassNames() {
        List<String> names = new java.util.ArrayList<>();
        names.add(SYNC_KAFKA_SINK);
        names.addAll(providers().keySet());
        return names;
    }

    private static Map<String, SinkProvider> providers() {
        Map<String, SinkProvider> p = providers;
        if (p == null) {
            Map<String, SinkProvider> found = new LinkedHashMap<>();
            for (SinkProvider provider : ServiceLoader.load(SinkProvider.class, Sinks.class.getClassLoader())) {
                for (String name : provider.sinkClassNames()) {
                    if (!name.equals(SYNC_KAFKA_SINK)) {
                        found.putIfAbsent(name, provider);
                    }
                }
            }
            p = Map.copyOf(found);
            providers = p;
        }
        return p;
    }
}
