package io.flowkafka.internal.skip;

import io.flowkafka.internal.skip.Token.Kind;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a {@code skip_if_expression} into tokens: names (optionally in backticks), {@code $variables}, strings in
 * single or double quotes (a backslash escapes the next character, a doubled quote stands for itself), integers and
 * decimals with an optional minus sign, comparison operators, parentheses, commas and dots.
 */
final class Lexer {
    private final String text;
    private int i;

    private Lexer(String text) {
        this.text = text;
    }

    /**
     * The tokens of {@code text}, ending with {@link Kind#END}.
     *
     * @throws SkipExpressionException at a character no token starts with, or an unterminated string
     */
    static List<Token> tokens(String text) {
        Lexer lexer = new Lexer(text);
        List<Token> out = new ArrayList<>();
        while (true) {
            Token t = lexer.next();
            out.add(t);
            if (t.kind() == Kind.END) {
                return out;
            }
        }
    }

    private Token next() {
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        int start = i;
        if (i >= text.length()) {
            return new Token(Kind.END, "", null, start + 1);
        }
        char c = text.charAt(i);
        switch (c) {
            case '(' -> {
                return punctuation(Kind.LPAREN, 1);
            }
            case ')' -> {
                return punctuation(Kind.RPAREN, 1);
            }
            case ',' -> {
                return punctuation(Kind.COMMA, 1);
            }
            case '.' -> {
                return punctuation(Kind.DOT, 1);
            }
            case '=' -> {
                return punctuation(Kind.OPERATOR, peek(1) == '=' ? 2 : 1);
            }
            case '!' -> {
                if (peek(1) == '=') {
                    return punctuation(Kind.OPERATOR, 2);
                }
                throw new SkipExpressionException(start + 1, "expected '!=' but found '!'");
            }
            case '<' -> {
                return punctuation(Kind.OPERATOR, peek(1) == '=' || peek(1) == '>' ? 2 : 1);
            }
            case '>' -> {
                return punctuation(Kind.OPERATOR, peek(1) == '=' ? 2 : 1);
            }
            case '\'', '"' -> {
                return string(c);
            }
            case '`' -> {
                int end = text.indexOf('`', i + 1);
                if (end < 0 || end == i + 1) {
                    throw new SkipExpressionException(start + 1, end < 0 ? "a field name in backticks is not closed"
                            : "a field name in backticks is empty");
                }
                i = end + 1;
                return new Token(Kind.QUOTED_NAME, text.substring(start, i), text.substring(start + 1, end), start + 1);
            }
            case '$' -> {
                i++;
                int nameStart = i;
                while (i < text.length() && isNamePart(text.charAt(i))) {
                    i++;
                }
                return new Token(Kind.VARIABLE, text.substring(start, i), text.substring(nameStart, i), start + 1);
            }
            default -> {
                if (Character.isDigit(c) || (c == '-' && Character.isDigit(peek(1)))) {
                    return number();
                }
                if (isNameStart(c)) {
                    while (i < text.length() && isNamePart(text.charAt(i))) {
                        i++;
                    }
                    String name = text.substring(start, i);
                    return new Token(Kind.NAME, name, name, start + 1);
                }
                throw new SkipExpressionException(start + 1, "unexpected character '" + c + "'");
            }
        }
    }

    private Token punctuation(Kind kind, int length) {
        int start = i;
        i += length;
        return new Token(kind, text.substring(start, i), null, start + 1);
    }

    private char peek(int ahead) {
        return i + ahead < text.length() ? text.charAt(i + ahead) : '\0';
    }

    private Token string(char quote) {
        int start = i;
        StringBuilder value = new StringBuilder();
        i++;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                value.append(text.charAt(i + 1));
                i += 2;
            } else if (c == quote && peek(1) == quote) {
                value.append(quote);
                i += 2;
            } else if (c == quote) {
                i++;
                return new Token(Kind.STRING, text.substring(start, i), value.toString(), start + 1);
            } else {
                value.append(c);
                i++;
            }
        }
        throw new SkipExpressionException(start + 1, "the string starting here is not closed: add a " + quote
                + " at its end");
    }

    private Token number() {
        int start = i;
        if (text.charAt(i) == '-') {
            i++;
        }
        while (i < text.length() && Character.isDigit(text.charAt(i))) {
            i++;
        }
        boolean decimal = i + 1 < text.length() && text.charAt(i) == '.' && Character.isDigit(text.charAt(i + 1));
        if (decimal) {
            i++;
            while (i < text.length() && Character.isDigit(text.charAt(i))) {
                i++;
            }
        }
        String s = text.substring(start, i);
        if (i < text.length() && isNamePart(text.charAt(i))) {
            throw new SkipExpressionException(start + 1, "expected a number but found '" + s + text.charAt(i)
                    + "': a field name starts with a letter or '_'");
        }
        if (decimal) {
            return new Token(Kind.DECIMAL, s, Double.parseDouble(s), start + 1);
        }
        try {
            return new Token(Kind.INTEGER, s, Long.parseLong(s), start + 1);
        } catch (NumberFormatException e) {
            throw new SkipExpressionException(start + 1, "the integer " + s + " is out of the 64-bit range; write it "
                    + "as a decimal (" + s + ".0) to compare approximately");
        }
    }

    private static boolean isNameStart(char c) {
        return Character.isLetter(c) || c == '_';
    }

    private static boolean isNamePart(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }
}
