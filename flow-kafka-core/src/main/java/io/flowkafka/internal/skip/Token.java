package io.flowkafka.internal.skip;

import org.jspecify.annotations.Nullable;

/**
 * One token of a {@code skip_if_expression}.
 *
 * @param kind what it is
 * @param text the characters it was read from (for messages)
 * @param value a name (identifier, variable), a string or a number; null for punctuation and the end
 * @param position where it starts, counted from 1
 */
record Token(Kind kind, String text, @Nullable Object value, int position) {
    enum Kind {
        /** A bare name: a payload field segment or a keyword (case-insensitive). */
        NAME,
        /** A name in backticks: always a payload field segment, never a keyword. */
        QUOTED_NAME,
        /** {@code $name}. */
        VARIABLE,
        STRING,
        INTEGER,
        DECIMAL,
        /** A comparison operator. */
        OPERATOR,
        LPAREN,
        RPAREN,
        COMMA,
        DOT,
        END
    }

    /** Whether this is the bare keyword {@code keyword} (case-insensitive). */
    boolean is(String keyword) {
        return kind == Kind.NAME && text.equalsIgnoreCase(keyword);
    }

    /** The token as a message names it: {@code 'text'}, or {@code end}. */
    String describe() {
        return kind == Kind.END ? "end" : "'" + text + "'";
    }
}
