package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON form of {@link TableAttributes}, the {@code _table.json} manifest: one home for its field names. */
final class TableAttributesJson {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private TableAttributesJson() {
    }

    static byte[] write(TableAttributes attributes) throws IOException {
        ObjectNode root = MAPPER.createObjectNode();
        if (attributes.tableTimestamp() != null) {
            root.put(TableAttributes.TABLE_TIMESTAMP, attributes.tableTimestamp().toString());
        }
        ArrayNode parts = root.putArray("parts");
        for (TablePart p : attributes.parts()) {
            ObjectNode part = parts.addObject().put("name", p.name()).put("row_count", p.rowCount())
                    .put("byte_size", p.byteSize()).put("data_weight", p.dataWeight());
            ArrayNode marks = part.putArray("sync_marks");
            for (SyncMark m : p.syncMarks()) {
                marks.addArray().add(m.row()).add(m.position());
            }
        }
        attributes.custom().forEach(root::set);
        return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
    }

    static TableAttributes read(byte[] json, String source) throws IOException {
        JsonNode root = MAPPER.readTree(json);
        if (root == null || !root.isObject()) {
            throw new IOException(source + ": table attributes must be a JSON object");
        }
        Instant timestamp = null;
        List<TablePart> parts = new ArrayList<>();
        Map<String, JsonNode> custom = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            switch (e.getKey()) {
                case TableAttributes.TABLE_TIMESTAMP -> {
                    try {
                        timestamp = Instant.parse(e.getValue().asText());
                    } catch (DateTimeParseException ex) {
                        throw new IOException(source + ": table_timestamp must be an ISO 8601 instant but was "
                                + e.getValue(), ex);
                    }
                }
                case "parts" -> {
                    for (JsonNode p : e.getValue()) {
                        List<SyncMark> marks = new ArrayList<>();
                        for (JsonNode m : p.path("sync_marks")) {
                            marks.add(new SyncMark(m.path(0).asLong(), m.path(1).asLong()));
                        }
                        parts.add(new TablePart(p.path("name").asText(), p.path("row_count").asLong(),
                                p.path("byte_size").asLong(), p.path("data_weight").asLong(), marks));
                    }
                }
                default -> custom.put(e.getKey(), e.getValue());
            }
        }
        return new TableAttributes(timestamp, parts, custom);
    }
}
