package io.flowkafka.internal.skip;

/** A comparison operator of a {@code skip_if_expression}; a relation never holds between incomparable values. */
enum Relation {
    EQ("="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">=");

    private final String symbol;

    Relation(String symbol) {
        this.symbol = symbol;
    }

    /** The operator of {@code text}: {@code = == != <> < <= > >=}. */
    static Relation of(String text) {
        return switch (text) {
            case "=", "==" -> EQ;
            case "!=", "<>" -> NE;
            case "<" -> LT;
            case "<=" -> LE;
            case ">" -> GT;
            case ">=" -> GE;
            default -> throw new IllegalArgumentException("not a comparison operator: " + text);
        };
    }

    /** Whether the relation holds for a result of {@link Values#compare}. */
    boolean holds(int comparison) {
        if (comparison == Values.INCOMPARABLE) {
            return false;
        }
        return switch (this) {
            case EQ -> comparison == 0;
            case NE -> comparison != 0;
            case LT -> comparison < 0;
            case LE -> comparison <= 0;
            case GT -> comparison > 0;
            case GE -> comparison >= 0;
        };
    }

    /** The relation with its operands swapped: {@code a < b} is {@code b > a}. */
    Relation swapped() {
        return switch (this) {
            case EQ, NE -> this;
            case LT -> GT;
            case LE -> GE;
            case GT -> LT;
            case GE -> LE;
        };
    }

    @Override
    public String toString() {
        return symbol;
    }
}
