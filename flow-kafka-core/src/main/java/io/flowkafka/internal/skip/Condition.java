package io.flowkafka.internal.skip;

import io.flowkafka.api.Message;

/**
 * A node of a compiled {@code skip_if_expression}: true when the message is to be skipped. Nodes are immutable and
 * allocate nothing when tested, so one tree serves every task of a computation at once.
 */
interface Condition {
    boolean test(Message message);

    /** {@code a and b and ...}: stops at the first false part. */
    record All(Condition[] parts) implements Condition {
        @Override
        public boolean test(Message message) {
            for (Condition c : parts) {
                if (!c.test(message)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** {@code a or b or ...}: stops at the first true part. */
    record Any(Condition[] parts) implements Condition {
        @Override
        public boolean test(Message message) {
            for (Condition c : parts) {
                if (c.test(message)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** {@code not a}. */
    record Not(Condition inner) implements Condition {
        @Override
        public boolean test(Message message) {
            return !inner.test(message);
        }
    }

    /** {@code a <relation> b}. */
    record Comparison(Operand left, Relation relation, Operand right) implements Condition {
        @Override
        public boolean test(Message message) {
            return relation.holds(Values.compare(left.value(message), right.value(message)));
        }
    }

    /** {@code $event_timestamp <relation> 123} on the primitive timestamp: no boxing per message. */
    record TimestampComparison(Operand.Variable variable, Relation relation, long bound) implements Condition {
        @Override
        public boolean test(Message message) {
            return relation.holds(Long.compare(variable.timestamp(message), bound));
        }
    }

    /** {@code a in (b, c, ...)}: {@code a} equals one of them. */
    record Membership(Operand value, Operand[] items) implements Condition {
        @Override
        public boolean test(Message message) {
            Object v = value.value(message);
            for (Operand item : items) {
                if (Values.compare(v, item.value(message)) == 0) {
                    return true;
                }
            }
            return false;
        }
    }

    /** {@code a is null}, or {@code a is not null} when {@code negated}. */
    record NullCheck(Operand value, boolean negated) implements Condition {
        @Override
        public boolean test(Message message) {
            return (value.value(message) == null) != negated;
        }
    }

    /** A value used as a condition ({@code active}, {@code true}): true only for the boolean true. */
    record Truth(Operand value) implements Condition {
        @Override
        public boolean test(Message message) {
            return Boolean.TRUE.equals(value.value(message));
        }
    }
}
