package io.flowkafka.internal.skip;

import io.flowkafka.api.Message;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import org.apache.avro.Schema;

/**
 * A compiled {@code skip_if_expression}: a predicate over a message's payload fields and its {@code $} variables;
 * a message it matches is skipped by the computation. Parsed once into a tree of small nodes; {@link #matches}
 * allocates nothing beyond what reading the Avro value needs.
 *
 * <p>Grammar (keywords case-insensitive; a field named like a keyword goes in backticks):
 * <pre>
 * or         := and ("or" and)*
 * and        := not ("and" not)*
 * not        := "not" not | "(" or ")" | predicate
 * predicate  := value [op value | ["not"] "in" "(" value ("," value)* ")" | "is" ["not"] "null"]
 * op         := "=" | "==" | "!=" | "&lt;&gt;" | "&lt;" | "&lt;=" | "&gt;" | "&gt;="
 * value      := 'string' | "string" | integer | decimal | true | false | null | field | $variable
 * field      := name ("." name)*          (a payload field; dotted paths go into nested records)
 * $variable  := $message_id | $stream_id | $event_timestamp | $system_timestamp
 * </pre>
 * A value alone is a condition only when it is the boolean true. Comparisons follow {@link Values}: a comparison
 * of incompatible types, or with null (a missing field), is false.
 *
 * <p>Immutable and thread-safe: one instance serves every task of a computation.
 */
public final class SkipExpression {
    private final String text;
    private final Condition root;
    private final List<Operand.PayloadField> fields;

    private SkipExpression(String text, Condition root, List<Operand.PayloadField> fields) {
        this.text = text;
        this.root = root;
        this.fields = fields;
    }

    /**
     * Parses an expression.
     *
     * @throws SkipExpressionException naming the position and what was expected there
     */
    public static SkipExpression parse(String text) {
        Objects.requireNonNull(text, "text");
        Parser.Result r = Parser.parse(text);
        return new SkipExpression(text, r.condition(), r.fields());
    }

    /**
     * Checks that every payload field the expression names exists in one of the input payload schemas (a field of
     * another stream's payload is null in this one's messages).
     *
     * @throws SkipExpressionException at the first unknown field, listing the fields that exist
     */
    public void checkFields(Collection<Schema> payloadSchemas) {
        for (Operand.PayloadField f : fields) {
            if (!PayloadFields.exists(payloadSchemas, f.path())) {
                throw new SkipExpressionException(f.position(), "unknown payload field '" + f.dotted()
                        + "'; the input payloads have: " + PayloadFields.list(payloadSchemas));
            }
        }
    }

    /** Whether {@code message} is to be skipped. Never throws for a value of an unexpected type: that is false. */
    public boolean matches(Message message) {
        return root.test(message);
    }

    /** The expression as written. */
    public String text() {
        return text;
    }

    @Override
    public String toString() {
        return text;
    }
}
