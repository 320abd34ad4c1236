package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.api.MessageId;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The arrival-order sink's {@code progress} (reference 001: "contains the owner (pipeline, computation, sink id), the
 * shared table sequence, and a separate frontier (system_timestamp, message_id) for each partition"). The sequence is
 * the logical timestamp {@code T} of the next table; every written table moves it by one period, so of two progresses
 * of one owner the one with the later {@code next_table_timestamp} is the newer. Immutable.
 *
 * @param owner who writes the directory
 * @param nextTableTimestamp the next table's {@code table_timestamp}: the open slot
 * @param frontiers per task partition, the last message written to a table
 */
record SinkProgress(Owner owner, Instant nextTableTimestamp, Map<Integer, Frontier> frontiers) {
    /** The attribute name, on the directory and on every table the sink writes. */
    static final String ATTRIBUTE = "progress";

    SinkProgress {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(nextTableTimestamp, "nextTableTimestamp");
        frontiers = Map.copyOf(frontiers);
    }

    /** The writer of a directory: pipeline, computation and sink id. */
    record Owner(String pipeline, String computation, String sink) {
        @Override
        public String toString() {
            return "pipeline '" + pipeline + "', computation '" + computation + "', sink '" + sink + "'";
        }
    }

    /** The last message of a partition written to a table. */
    record Frontier(long systemTimestamp, MessageId messageId) {
    }

    /** The frontier's message id of a partition, or null when none was written. */
    @Nullable MessageId covered(int partition) {
        Frontier f = frontiers.get(partition);
        return f == null ? null : f.messageId();
    }

    SinkProgress withNext(Instant next, Map<Integer, Frontier> newFrontiers) {
        return new SinkProgress(owner, next, newFrontiers);
    }

    ObjectNode toJson() {
        ObjectNode root = TableAttributesJson.MAPPER.createObjectNode();
        ObjectNode o = root.putObject("owner");
        o.put("pipeline", owner.pipeline()).put("computation", owner.computation()).put("sink", owner.sink());
        root.put("next_table_timestamp", nextTableTimestamp.toString());
        ObjectNode f = root.putObject("frontiers");
        new TreeMap<>(frontiers).forEach((p, fr) -> f.putObject(Integer.toString(p))
                .put("system_timestamp", fr.systemTimestamp()).put("message_id", fr.messageId().toString()));
        return root;
    }

    /** Reads a progress; throws IllegalArgumentException naming {@code where} if it is malformed. */
    static SinkProgress fromJson(JsonNode node, String where) {
        try {
            JsonNode o = node.get("owner");
            Owner owner = new Owner(o.get("pipeline").asText(), o.get("computation").asText(), o.get("sink").asText());
            Map<Integer, Frontier> frontiers = new TreeMap<>();
            JsonNode f = node.get("frontiers");
            if (f != null) {
                f.fields().forEachRemaining(e -> frontiers.put(Integer.parseInt(e.getKey()), new Frontier(
                        e.getValue().get("system_timestamp").asLong(),
                        MessageId.fromHex(e.getValue().get("message_id").asText()))));
            }
            return new SinkProgress(owner, Instant.parse(node.get("next_table_timestamp").asText()), frontiers);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("malformed progress attribute in " + where + ": " + node
                    + "; remove it to start the sequence after the newest table", e);
        }
    }
}
