package io.flowkafka.internal.skip;

import io.flowkafka.api.Message;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/** A value of a {@code skip_if_expression}: a literal, a payload field or a {@code $} variable of the message. */
interface Operand {
    /** The value for {@code message}: an Avro value as read (no conversion), a literal, or null. */
    @Nullable Object value(Message message);

    /** A constant: a Long, Double, Boolean, Avro {@link org.apache.avro.util.Utf8}, MessageId or null. */
    record Literal(@Nullable Object constant) implements Operand {
        @Override
        public @Nullable Object value(Message message) {
            return constant;
        }
    }

    /**
     * A payload field, a path into nested records ({@code user.country}); null when a record on the way lacks the
     * field or a value on the way is not a record (a null branch of a union, say).
     */
    final class PayloadField implements Operand {
        private final String[] path;
        private final int position;

        PayloadField(String[] path, int position) {
            this.path = path;
            this.position = position;
        }

        @Override
        public @Nullable Object value(Message message) {
            Object v = message.getPayload();
            for (String name : path) {
                if (!(v instanceof GenericRecord r)) {
                    return null;
                }
                Schema.Field f = r.getSchema().getField(name);
                if (f == null) {
                    return null;
                }
                v = r.get(f.pos());
            }
            return v;
        }

        String[] path() {
            return path;
        }

        /** Where the reference starts in the expression, counted from 1. */
        int position() {
            return position;
        }

        String dotted() {
            return String.join(".", path);
        }
    }

    /** The message's own values, named with a {@code $}. */
    enum Variable implements Operand {
        MESSAGE_ID("$message_id") {
            @Override
            public Object value(Message message) {
                return message.getMessageId();
            }
        },
        STREAM_ID("$stream_id") {
            @Override
            public Object value(Message message) {
                return message.getStreamId();
            }
        },
        EVENT_TIMESTAMP("$event_timestamp") {
            @Override
            public Object value(Message message) {
                return message.getEventTimestamp();
            }

            @Override
            long timestamp(Message message) {
                return message.getEventTimestamp();
            }
        },
        SYSTEM_TIMESTAMP("$system_timestamp") {
            @Override
            public Object value(Message message) {
                return message.getSystemTimestamp();
            }

            @Override
            long timestamp(Message message) {
                return message.getSystemTimestamp();
            }
        };

        private final String name;

        Variable(String name) {
            this.name = name;
        }

        /** The variable called {@code name} (without the {@code $}), or null. */
        static @Nullable Variable named(String name) {
            for (Variable v : values()) {
                if (v.name.substring(1).equals(name)) {
                    return v;
                }
            }
            return null;
        }

        /** Whether the value is a timestamp in nanoseconds, readable without boxing by {@link #timestamp}. */
        boolean isTimestamp() {
            return this == EVENT_TIMESTAMP || this == SYSTEM_TIMESTAMP;
        }

        /** The timestamp of a {@link #isTimestamp} variable. */
        long timestamp(Message message) {
            throw new UnsupportedOperationException(name + " is not a timestamp");
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
