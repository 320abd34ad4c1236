package io.flowkafka.internal.serde;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.jspecify.annotations.Nullable;

/**
 * The schemas state rows may have been written with, by fingerprint (Avro's CRC-64 of the parsing canonical form):
 * the spec's own, and those of earlier versions that {@code StateSchemaTopic} read. A fingerprint names one canonical
 * schema, so one registry serves every pipeline of the JVM; it holds one entry per distinct schema seen.
 *
 * <p>Thread-safe.
 */
public final class StateSchemas {
    private static final Map<Long, Schema> BY_FINGERPRINT = new ConcurrentHashMap<>();

    private StateSchemas() {
    }

    /** The fingerprint a state row of {@code schema} carries. */
    public static long fingerprint(Schema schema) {
        return SchemaNormalization.parsingFingerprint64(schema);
    }

    /** Remembers {@code schema} as one rows may have been written with; returns its fingerprint. */
    public static long register(Schema schema) {
        long fp = fingerprint(schema);
        BY_FINGERPRINT.putIfAbsent(fp, schema);
        return fp;
    }

    /** The schema of {@code fingerprint}, or null if none was registered. */
    public static @Nullable Schema of(long fingerprint) {
        return BY_FINGERPRINT.get(fingerprint);
    }
}
