package io.flowkafka.internal.skip;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.skip.Token.Kind;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.avro.util.Utf8;

/**
 * A recursive-descent parser of {@code skip_if_expression} into a {@link Condition} tree; the grammar is in
 * {@link SkipExpression}. Every error names the position and what was expected.
 */
final class Parser {
    private static final Set<String> KEYWORDS = Set.of("and", "or", "not", "in", "is", "null", "true", "false");

    private final List<Token> tokens;
    private final List<Operand.PayloadField> fields = new ArrayList<>();
    private int at;

    private Parser(List<Token> tokens) {
        this.tokens = tokens;
    }

    /** The parsed condition and the payload fields it reads. */
    record Result(Condition condition, List<Operand.PayloadField> fields) {
    }

    /** @throws SkipExpressionException at the first problem */
    static Result parse(String text) {
        Parser p = new Parser(Lexer.tokens(text));
        Condition c = p.or();
        Token t = p.peek();
        if (t.kind() != Kind.END) {
            throw p.error(t, "expected 'and', 'or' or the end of the expression");
        }
        return new Result(c, List.copyOf(p.fields));
    }

    private Token peek() {
        return tokens.get(at);
    }

    private Token take() {
        Token t = tokens.get(at);
        if (t.kind() != Kind.END) {
            at++;
        }
        return t;
    }

    private SkipExpressionException error(Token found, String expected) {
        return new SkipExpressionException(found.position(), expected + " but found " + found.describe());
    }

    private Condition or() {
        List<Condition> parts = new ArrayList<>();
        parts.add(and());
        while (peek().is("or")) {
            take();
            parts.add(and());
        }
        return parts.size() == 1 ? parts.get(0) : new Condition.Any(parts.toArray(Condition[]::new));
    }

    private Condition and() {
        List<Condition> parts = new ArrayList<>();
        parts.add(not());
        while (peek().is("and")) {
            take();
            parts.add(not());
        }
        return parts.size() == 1 ? parts.get(0) : new Condition.All(parts.toArray(Condition[]::new));
    }

    private Condition not() {
        if (peek().is("not")) {
            take();
            return new Condition.Not(not());
        }
        if (peek().kind() == Kind.LPAREN) {
            Token open = take();
            Condition inner = or();
            Token close = take();
            if (close.kind() != Kind.RPAREN) {
                throw error(close, "expected ')' to close the '(' at " + open.position());
            }
            return inner;
        }
        return predicate();
    }

    private Condition predicate() {
        Token first = peek();
        Operand left = value("a condition");
        Token t = peek();
        if (t.kind() == Kind.OPERATOR) {
            take();
            Token rightToken = peek();
            Operand right = value("a value after '" + t.text() + "'");
            return comparison(left, Relation.of(t.text()), right, first, rightToken);
        }
        if (t.is("in")) {
            take();
            return membership(left);
        }
        if (t.is("not")) {
            take();
            Token in = take();
            if (!in.is("in")) {
                throw error(in, "expected 'in' after 'not'");
            }
            return new Condition.Not(membership(left));
        }
        if (t.is("is")) {
            take();
            boolean negated = peek().is("not");
            if (negated) {
                take();
            }
            Token n = take();
            if (!n.is("null")) {
                throw error(n, negated ? "expected 'null' after 'is not'" : "expected 'null' or 'not null' after 'is'");
            }
            return new Condition.NullCheck(left, negated);
        }
        if (left instanceof Operand.Literal l && !(l.constant() instanceof Boolean)) {
            throw error(t, "expected a comparison (=, !=, <, <=, >, >=, in, is null) after " + first.describe());
        }
        return new Condition.Truth(left);
    }

    private Condition membership(Operand left) {
        Token open = take();
        if (open.kind() != Kind.LPAREN) {
            throw error(open, "expected '(' after 'in'");
        }
        List<Operand> items = new ArrayList<>();
        while (true) {
            Token itemToken = peek();
            items.add(asMessageIdIfCompared(left, value("a value in the list of 'in'"), itemToken));
            Token sep = take();
            if (sep.kind() == Kind.RPAREN) {
                return new Condition.Membership(left, items.toArray(Operand[]::new));
            }
            if (sep.kind() != Kind.COMMA) {
                throw error(sep, "expected ',' or ')' in the list of 'in'");
            }
        }
    }

    private Condition comparison(Operand left, Relation relation, Operand right, Token leftToken, Token rightToken) {
        for (Token t : List.of(leftToken, rightToken)) {
            if (t.is("null")) {
                throw new SkipExpressionException(t.position(), "a comparison with null is never true; write "
                        + "'is null' or 'is not null'");
            }
        }
        if (left instanceof Operand.Variable v && v.isTimestamp() && right instanceof Operand.Literal l
                && l.constant() instanceof Long bound) {
            return new Condition.TimestampComparison(v, relation, bound);
        }
        if (right instanceof Operand.Variable v && v.isTimestamp() && left instanceof Operand.Literal l
                && l.constant() instanceof Long bound) {
            return new Condition.TimestampComparison(v, relation.swapped(), bound);
        }
        return new Condition.Comparison(asMessageIdIfCompared(right, left, leftToken), relation,
                asMessageIdIfCompared(left, right, rightToken));
    }

    /** A string literal compared with {@code $message_id} is its hexadecimal form: parsed once, here. */
    private Operand asMessageIdIfCompared(Operand other, Operand operand, Token token) {
        if (other != Operand.Variable.MESSAGE_ID || !(operand instanceof Operand.Literal l)
                || !(l.constant() instanceof Utf8 text)) {
            return operand;
        }
        try {
            return new Operand.Literal(MessageId.fromHex(text.toString()));
        } catch (IllegalArgumentException e) {
            throw new SkipExpressionException(token.position(), "expected a message id in hexadecimal (as "
                    + "MessageId.toString() prints it, e.g. '0a1b2c3d00000000000000ff') but found " + token.describe());
        }
    }

    private Operand value(String expected) {
        Token t = take();
        switch (t.kind()) {
            case STRING:
                return new Operand.Literal(new Utf8((String) t.value()));
            case INTEGER:
            case DECIMAL:
                return new Operand.Literal(t.value());
            case VARIABLE: {
                Operand.Variable v = Operand.Variable.named((String) t.value());
                if (v == null) {
                    throw new SkipExpressionException(t.position(), "unknown variable " + t.describe()
                            + "; the variables are $message_id, $stream_id, $event_timestamp, $system_timestamp");
                }
                return v;
            }
            case NAME:
                if (t.is("null")) {
                    return new Operand.Literal(null);
                }
                if (t.is("true") || t.is("false")) {
                    return new Operand.Literal(t.is("true"));
                }
                if (KEYWORDS.contains(t.text().toLowerCase(Locale.ROOT))) {
                    throw error(t, "expected " + expected + " (a field named like a keyword goes in backticks: `"
                            + t.text() + "`)");
                }
                return field(t);
            case QUOTED_NAME:
                return field(t);
            default:
                throw error(t, "expected " + expected);
        }
    }

    private Operand field(Token first) {
        List<String> path = new ArrayList<>();
        path.add((String) first.value());
        while (peek().kind() == Kind.DOT) {
            take();
            Token t = take();
            if ((t.kind() != Kind.NAME && t.kind() != Kind.QUOTED_NAME)) {
                throw error(t, "expected a field name after '.'");
            }
            path.add((String) t.value());
        }
        Operand.PayloadField f = new Operand.PayloadField(path.toArray(String[]::new), first.position());
        fields.add(f);
        return f;
    }
}
