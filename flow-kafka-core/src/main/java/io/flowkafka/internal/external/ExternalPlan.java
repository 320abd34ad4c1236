package io.flowkafka.internal.external;

import java.time.Duration;
import java.util.Map;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * The external state of one computation as compiled: which of its state rows it publishes to a table topic, and
 * which tables it reads.
 *
 * @param published state name (a manager's name, or a state another computation state-joins) to the table topic
 *     its committed writes are produced to, in the call's transaction
 * @param reads accessor name to the table a joiner or state joiner reads
 */
public record ExternalPlan(Map<String, Published> published, Map<String, Read> reads) {
    /** Copies the maps. */
    public ExternalPlan {
        published = Map.copyOf(published);
        reads = Map.copyOf(reads);
    }

    /** {@return the plan of a computation without external state} */
    public static ExternalPlan none() {
        return new ExternalPlan(Map.of(), Map.of());
    }

    /**
     * Where the committed writes of one state name go.
     *
     * @param topic the table topic
     * @param sinkNode the sink node writing it
     */
    public record Published(String topic, String sinkNode) {
    }

    /**
     * A table a computation reads.
     *
     * @param name the accessor name, e.g. {@code /reference_state}
     * @param stateJoiner a state joiner (else an external state joiner)
     * @param writer who writes the table, for messages: {@code "computation 'c' (its manager)"} or similar
     * @param topic the table topic, read through its global store
     * @param versioned whether the topic holds a versioned reference
     * @param schema the row schema
     * @param cacheTtl how long a looked-up row may be reused; null: every lookup reads the store
     * @param staticTable a {@code TStaticTableKeyVisitorJoiner}: no topic; its row is the one the key visitor's scan
     *     read for the visit key
     */
    public record Read(String name, boolean stateJoiner, String writer, String topic, boolean versioned,
            Schema schema, @Nullable Duration cacheTtl, boolean staticTable) {

        /**
         * A read of a topic.
         *
         * @param name the accessor name
         * @param stateJoiner a state joiner (else an external state joiner)
         * @param writer who writes the table, for messages
         * @param topic the table topic
         * @param versioned whether the topic holds a versioned reference
         * @param schema the row schema
         * @param cacheTtl how long a looked-up row may be reused; null: every lookup reads the store
         */
        public Read(String name, boolean stateJoiner, String writer, String topic, boolean versioned, Schema schema,
                @Nullable Duration cacheTtl) {
            this(name, stateJoiner, writer, topic, versioned, schema, cacheTtl, false);
        }
    }
}
