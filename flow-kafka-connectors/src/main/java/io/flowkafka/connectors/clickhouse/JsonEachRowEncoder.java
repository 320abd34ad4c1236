package io.flowkafka.connectors.clickhouse;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;

/**
 * Encodes Avro records as ClickHouse {@code JSONEachRow} rows: one JSON object per line, the schema's fields in
 * schema order, optionally the message id first. Keeps the rule block deduplication needs: the same records give the
 * same bytes, always (fields in schema order, map keys sorted, numbers as Java prints them, no whitespace).
 *
 * <p>Types: strings, enums and fixed-free scalars as themselves; {@code null} for a union's null branch; arrays as
 * JSON arrays; maps as objects; bytes as ISO-8859-1 strings; nested records as objects. Not thread-safe.
 */
final class JsonEachRowEncoder {
    private static final JsonFactory JSON = new JsonFactory();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
    private final String messageIdColumn;

    /**
     * An encoder.
     *
     * @param messageIdColumn the column receiving each row's message id, or null for none
     */
    JsonEachRowEncoder(String messageIdColumn) {
        this.messageIdColumn = messageIdColumn;
    }

    /** Appends one row. */
    void add(GenericRecord record, String messageId) {
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            if (messageIdColumn != null) {
                g.writeStringField(messageIdColumn, messageId);
            }
            for (Schema.Field f : record.getSchema().getFields()) {
                g.writeFieldName(f.name());
                write(g, record.get(f.pos()));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.write('\n');
    }

    /** The rows added since the last call, and starts anew. */
    byte[] take() {
        byte[] rows = out.toByteArray();
        out.reset();
        return rows;
    }

    private static void write(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof CharSequence || v instanceof org.apache.avro.generic.GenericEnumSymbol<?>) {
            g.writeString(v.toString());
        } else if (v instanceof Integer i) {
            g.writeNumber(i);
        } else if (v instanceof Long l) {
            g.writeNumber(l);
        } else if (v instanceof Float f) {
            g.writeNumber(f);
        } else if (v instanceof Double d) {
            g.writeNumber(d);
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof ByteBuffer bb) {
            // the bytes themselves in the JSON string (ASCII quotes, backslashes and controls escaped): ClickHouse
            // stores a string's bytes as they come, so a UTF-8 re-encoding would store other, longer bytes
            byte[] bytes = new byte[bb.remaining()];
            bb.duplicate().get(bytes);
            g.writeUTF8String(bytes, 0, bytes.length);
        } else if (v instanceof GenericRecord r) {
            g.writeStartObject();
            for (Schema.Field f : r.getSchema().getFields()) {
                g.writeFieldName(f.name());
                write(g, r.get(f.pos()));
            }
            g.writeEndObject();
        } else if (v instanceof Map<?, ?> m) {
            g.writeStartObject();
            for (Map.Entry<String, ?> e : sorted(m).entrySet()) {
                g.writeFieldName(e.getKey());
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (v instanceof Collection<?> c) {
            g.writeStartArray();
            for (Object o : c) {
                write(g, o);
            }
            g.writeEndArray();
        } else {
            g.writeString(v.toString());
        }
    }

    private static Map<String, Object> sorted(Map<?, ?> m) {
        Map<String, Object> s = new TreeMap<>();
        m.forEach((k, v) -> s.put(String.valueOf(k), v));
        return s;
    }
}
