package io.flowkafka.internal.skip;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import org.apache.avro.Schema;

/**
 * The payload fields an expression may name, from the input streams' Avro schemas: top-level fields and, through
 * records and unions of records, nested ones as dotted paths.
 */
final class PayloadFields {
    /** Nested records are listed this deep at most (a recursive schema is infinitely deep). */
    private static final int MAX_LISTED_DEPTH = 4;
    /** At most this many names in a message. */
    private static final int MAX_LISTED = 40;

    private PayloadFields() {
    }

    /** Whether some schema has the field at {@code path}. */
    static boolean exists(Collection<Schema> schemas, String[] path) {
        for (Schema s : schemas) {
            if (exists(s, path, 0)) {
                return true;
            }
        }
        return false;
    }

    private static boolean exists(Schema schema, String[] path, int i) {
        if (i == path.length) {
            return true;
        }
        if (schema.getType() == Schema.Type.UNION) {
            for (Schema branch : schema.getTypes()) {
                if (exists(branch, path, i)) {
                    return true;
                }
            }
            return false;
        }
        if (schema.getType() != Schema.Type.RECORD) {
            return false;
        }
        Schema.Field f = schema.getField(path[i]);
        return f != null && exists(f.schema(), path, i + 1);
    }

    /** The dotted paths of the schemas' fields, sorted, for a message ("..." when there are more). */
    static String list(Collection<Schema> schemas) {
        TreeSet<String> names = new TreeSet<>();
        for (Schema s : schemas) {
            collect(s, "", 0, names);
        }
        List<String> shown = new ArrayList<>(names);
        if (shown.size() > MAX_LISTED) {
            shown = new ArrayList<>(shown.subList(0, MAX_LISTED));
            shown.add("...");
        }
        return String.join(", ", shown);
    }

    private static void collect(Schema schema, String prefix, int depth, TreeSet<String> into) {
        if (schema.getType() == Schema.Type.UNION) {
            schema.getTypes().forEach(b -> collect(b, prefix, depth, into));
            return;
        }
        if (schema.getType() != Schema.Type.RECORD || depth >= MAX_LISTED_DEPTH) {
            return;
        }
        for (Schema.Field f : schema.getFields()) {
            into.add(prefix + f.name());
            collect(f.schema(), prefix + f.name() + ".", depth + 1, into);
        }
    }
}
