package io.flowkafka.internal.source;

import io.flowkafka.spi.SourceProvider;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/**
 * The source classes the runtime knows: those of every {@link SourceProvider} on the class path
 * ({@link ServiceLoader}, loaded once), core's {@code KafkaSource} among them. The first provider of a name wins.
 */
public final class Sources {
    private static volatile @Nullable Map<String, SourceProvider> providers;

    private Sources() {
    }

    /** The provider of a source class, or null if none serves it. */
    public static @Nullable SourceProvider provider(String sourceClassName) {
        return providers().get(sourceClassName);
    }

    /** Every known source class name, in load order. */
    public static List<String> knownSourceClassNames() {
        return List.copyOf(providers().keySet());
    }

    private static Map<String, SourceProvider> providers() {
        Map<String, SourceProvider> p = providers;
        if (p == null) {
            Map<String, SourceProvider> found = new LinkedHashMap<>();
            for (SourceProvider provider : ServiceLoader.load(SourceProvider.class, Sources.class.getClassLoader())) {
                for (String name : provider.sourceClassNames()) {
                    found.putIfAbsent(name, provider);
                }
            }
            p = Collections.unmodifiableMap(found);
            providers = p;
        }
        return p;
    }
}
