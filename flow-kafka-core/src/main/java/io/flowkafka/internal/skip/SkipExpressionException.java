package io.flowkafka.internal.skip;

/**
 * A {@code skip_if_expression} that cannot be used: bad syntax or an unknown payload field, at a position of the
 * text (counted from 1). The message reads {@code skip_if_expression at 14: expected a value after '=' but found
 * end}, so a caller can prefix it with the path of the setting.
 */
public final class SkipExpressionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final int position;
    private final String detail;

    SkipExpressionException(int position, String detail) {
        super("skip_if_expression at " + position + ": " + detail);
        this.position = position;
        this.detail = detail;
    }

    /** The position of the problem in the expression's text, counted from 1. */
    public int position() {
        return position;
    }

    /** What is wrong, without the position. */
    public String detail() {
        return detail;
    }
}
