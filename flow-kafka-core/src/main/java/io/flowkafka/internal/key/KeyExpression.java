package io.flowkafka.internal.key;

import io.flowkafka.internal.hash.FarmHash;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * A {@code group_by_schema} column expression, parsed and type-checked against a payload schema.
 *
 * <p>Grammar (whitespace allowed between tokens; function names are case-insensitive):
 * <pre>
 * expression := column | "farm_hash" "(" expression ("," expression)* ")"
 * column     := [A-Za-z_][A-Za-z0-9_]*      (a field of the payload record)
 * </pre>
 * A column must be a payload field of Avro type {@code string}, {@code int}, {@code long},
 * {@code double}, {@code float} or {@code boolean}, or a union of {@code null} with one of them.
 * {@code farm_hash} is YTsaurus' function ({@link FarmHash}), so the uint64 key column agrees
 * with YTsaurus.
 *
 * <p>Instances are immutable and thread-safe. {@link #evaluate} reads fields by name, so it works
 * on any record whose schema has the referenced fields with the parsed types.
 */
public final class KeyExpression {
    private static final String FARM_HASH = "farm_hash";

    private final String text;
    private final Node root;

    private KeyExpression(String text, Node root) {
        this.text = text;
        this.root = root;
    }

    /**
     * Parses {@code expression} and checks every column it references against {@code payloadSchema}.
     *
     * @param expression e.g. {@code user_id} or {@code farm_hash(user_id, region)}
     * @param payloadSchema the Avro record schema of the payloads it will be evaluated on
     * @return the parsed expression
     * @throws IllegalArgumentException naming the expression, the problem (bad syntax at a position,
     *     unknown function, unknown column with the schema's fields, unsupported column type) and the
     *     fix; also if {@code payloadSchema} is not a record schema
     */
    public static KeyExpression parse(String expression, Schema payloadSchema) {
        Objects.requireNonNull(expression, "expression");
        Objects.requireNonNull(payloadSchema, "payloadSchema");
        if (payloadSchema.getType() != Schema.Type.RECORD) {
            throw new IllegalArgumentException("cannot evaluate group_by_schema expression '" + expression
                    + "' on a payload schema of type " + payloadSchema.getType().getName()
                    + ": the stream's schema must be an Avro record");
        }
        Parser parser = new Parser(expression, payloadSchema);
        Node root = parser.parseExpression();
        parser.skipWhitespace();
        if (!parser.atEnd()) {
            throw parser.syntaxError("expected the end of the expression");
        }
        return new KeyExpression(expression, root);
    }

    /**
     * The expression of a {@code group_by_schema} column: its {@code expression}, or, when that is
     * null, the payload field named like the column.
     *
     * @param column the column
     * @param payloadSchema the Avro record schema of the payloads
     * @return the parsed expression
     * @throws IllegalArgumentException as {@link #parse}, e.g. when the field does not exist
     */
    public static KeyExpression forColumn(GroupByColumn column, Schema payloadSchema) {
        Objects.requireNonNull(column, "column");
        Objects.requireNonNull(payloadSchema, "payloadSchema");
        String expression = column.expression();
        if (expression != null) {
            return parse(expression, payloadSchema);
        }
        if (payloadSchema.getType() != Schema.Type.RECORD) {
            return parse(column.name(), payloadSchema); // throws the record-schema error
        }
        return new KeyExpression(column.name(), Parser.column(column.name(), column.name(), 0, payloadSchema));
    }

    /**
     * Evaluates this expression on a payload.
     *
     * @param payload a record with the referenced fields
     * @return a {@link Long} for {@code farm_hash} (the uint64 bits) and for int/long fields, a
     *     {@link String} for string fields, a {@link Double} for double/float fields, a
     *     {@link Boolean}, or null when a nullable field is null
     * @throws IllegalArgumentException if the payload lacks a referenced field or a value does not
     *     have the field's declared type
     */
    public @Nullable Object evaluate(GenericRecord payload) {
        Objects.requireNonNull(payload, "payload");
        return root.evaluate(payload);
    }

    /**
     * The type of the values {@link #evaluate} returns: {@link ColumnType#UINT64} for
     * {@code farm_hash}, otherwise the column's mapped type (int/long to INT64, string to STRING,
     * double/float to DOUBLE, boolean to BOOLEAN).
     */
    public ColumnType resultType() {
        return root.type();
    }

    /** Whether {@link #evaluate} may return null (a column of a nullable union). */
    public boolean nullable() {
        return root.nullable();
    }

    /** The payload fields this expression reads, in order of first appearance. */
    public List<String> columns() {
        List<String> out = new ArrayList<>();
        root.collectColumns(out);
        return out.stream().distinct().toList();
    }

    /** The expression text as given. */
    public String expression() {
        return text;
    }

    /** The expression text as given. */
    @Override
    public String toString() {
        return text;
    }

    private sealed interface Node permits ColumnNode, FarmHashNode {
        @Nullable Object evaluate(GenericRecord payload);

        ColumnType type();

        boolean nullable();

        void collectColumns(List<String> out);
    }

    private record ColumnNode(String expression, String field, ColumnType type, boolean nullable) implements Node {
        @Override
        public @Nullable Object evaluate(GenericRecord payload) {
            Schema.Field f = payload.getSchema().getField(field);
            if (f == null) {
                throw new IllegalArgumentException("group_by_schema expression '" + expression + "' reads field '"
                        + field + "', which payloads of schema " + payload.getSchema().getFullName()
                        + " do not have: write payloads with the stream's declared schema");
            }
            Object v = payload.get(f.pos());
            if (v == null) {
                return null;
            }
            Object converted = switch (type) {
                case STRING -> v instanceof CharSequence s ? s.toString() : null;
                case INT64 -> v instanceof Long || v instanceof Integer ? ((Number) v).longValue() : null;
                case DOUBLE -> v instanceof Double || v instanceof Float ? ((Number) v).doubleValue() : null;
                case BOOLEAN -> v instanceof Boolean ? v : null;
                case UINT64 -> null;
            };
            if (converted == null) {
                throw new IllegalArgumentException("group_by_schema expression '" + expression + "': field '" + field
                        + "' holds a " + v.getClass().getName() + " but its schema type is " + type.specName()
                        + ": build payloads that match the stream's schema");
            }
            return converted;
        }

        @Override
        public void collectColumns(List<String> out) {
            out.add(field);
        }
    }

    private record FarmHashNode(List<Node> arguments) implements Node {
        @Override
        public Object evaluate(GenericRecord payload) {
            List<@Nullable Object> values = new ArrayList<>(arguments.size());
            for (Node a : arguments) {
                values.add(a.evaluate(payload));
            }
            return FarmHash.farmHash(values);
        }

        @Override
        public ColumnType type() {
            return ColumnType.UINT64;
        }

        @Override
        public boolean nullable() {
            return false;
        }

        @Override
        public void collectColumns(List<String> out) {
            for (Node a : arguments) {
                a.collectColumns(out);
            }
        }
    }

    /** Recursive-descent parser; positions in messages are 1-based character positions. */
    private static final class Parser {
        private final String text;
        private final Schema schema;
        private int pos;

        Parser(String text, Schema schema) {
            this.text = text;
            this.schema = schema;
        }

        Node parseExpression() {
            skipWhitespace();
            int start = pos;
            String name = identifier();
            skipWhitespace();
            if (!atEnd() && text.charAt(pos) == '(') {
                if (!name.toLowerCase(Locale.ROOT).equals(FARM_HASH)) {
                    throw new IllegalArgumentException("group_by_schema expression '" + text + "' calls unknown function '"
                            + name + "' at position " + (start + 1) + ": the only function is farm_hash(column, ...)");
                }
                pos++;
                List<Node> args = new ArrayList<>();
                skipWhitespace();
                if (!atEnd() && text.charAt(pos) == ')') {
                    throw syntaxError("farm_hash needs at least one argument");
                }
                while (true) {
                    args.add(parseExpression());
                    skipWhitespace();
                    if (atEnd()) {
                        throw syntaxError("expected ',' or ')'");
                    }
                    char c = text.charAt(pos);
                    if (c == ',') {
                        pos++;
                    } else if (c == ')') {
                        pos++;
                        return new FarmHashNode(List.copyOf(args));
                    } else {
                        throw syntaxError("expected ',' or ')'");
                    }
                }
            }
            return column(text, name, start, schema);
        }

        static ColumnNode column(String expression, String name, int position, Schema schema) {
            Schema.Field field = schema.getField(name);
            if (field == null) {
                String fields = schema.getFields().stream().map(Schema.Field::name).collect(Collectors.joining(", "));
                throw new IllegalArgumentException("group_by_schema expression '" + expression + "' reads unknown column '"
                        + name + "' at position " + (position + 1) + ": record " + schema.getFullName()
                        + " has the fields [" + fields + "]; use one of them");
            }
            Schema type = field.schema();
            boolean nullable = false;
            if (type.getType() == Schema.Type.UNION) {
                List<Schema> branches = type.getTypes();
                List<Schema> nonNull = branches.stream().filter(s -> s.getType() != Schema.Type.NULL).toList();
                if (branches.size() != 2 || nonNull.size() != 1) {
                    throw unsupported(expression, name, type);
                }
                nullable = true;
                type = nonNull.get(0);
            }
            ColumnType columnType = switch (type.getType()) {
                case STRING -> ColumnType.STRING;
                case INT, LONG -> ColumnType.INT64;
                case DOUBLE, FLOAT -> ColumnType.DOUBLE;
                case BOOLEAN -> ColumnType.BOOLEAN;
                default -> throw unsupported(expression, name, field.schema());
            };
            return new ColumnNode(expression, name, columnType, nullable);
        }

        private static IllegalArgumentException unsupported(String expression, String name, Schema type) {
            return new IllegalArgumentException("group_by_schema expression '" + expression + "' reads column '" + name
                    + "' of Avro type " + type + ", which cannot be a key: use a field of type string, int, long, "
                    + "double, float or boolean, or a union of null with one of them");
        }

        private String identifier() {
            int start = pos;
            if (atEnd()) {
                throw syntaxError("expected a column name or farm_hash(...)");
            }
            char first = text.charAt(pos);
            if (!(Character.isLetter(first) && first < 128 || first == '_')) {
                throw syntaxError("expected a column name or farm_hash(...) but found '" + first + "'");
            }
            pos++;
            while (!atEnd()) {
                char c = text.charAt(pos);
                if (c < 128 && (Character.isLetterOrDigit(c) || c == '_')) {
                    pos++;
                } else {
                    break;
                }
            }
            return text.substring(start, pos);
        }

        void skipWhitespace() {
            while (!atEnd() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        boolean atEnd() {
            return pos >= text.length();
        }

        IllegalArgumentException syntaxError(String expected) {
            String found = atEnd() ? "the end" : "'" + text.charAt(pos) + "'";
            String what = expected.contains("but found") ? expected : expected + " but found " + found;
            return new IllegalArgumentException("bad syntax in group_by_schema expression '" + text + "' at position "
                    + (pos + 1) + ": " + what + "; write a column name or farm_hash(column, ...)");
        }
    }
}
