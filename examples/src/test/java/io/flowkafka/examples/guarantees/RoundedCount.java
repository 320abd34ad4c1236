package io.flowkafka.examples.guarantees;

import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * A key's running count kept so that the crash tests also break state deletes: state {@value #TOTAL} holds the count
 * within the current round of {@value #ROUND} messages and is deleted when the round ends; state {@value #ROUNDS}
 * holds the rounds ended. The count is {@code rounds * ROUND + total}. A delete lost or undone by a crash, or applied
 * without the write of {@value #ROUNDS} made in the same call, gives a count out of 1..n, which the tests check.
 */
public final class RoundedCount {
    /** Messages per round. */
    public static final int ROUND = 4;
    /** The count within the round; deleted when the round ends. */
    public static final String TOTAL = "total";
    /** The rounds ended. */
    public static final String ROUNDS = "rounds";
    /** The schema of both states. */
    public static final Schema STATE = SchemaBuilder.record("Count").namespace("guarantees").fields()
            .requiredLong("count").endRecord();

    private RoundedCount() {
    }

    /** Counts the current call's message and returns the key's count with it. */
    public static long next(RuntimeContext context) {
        StateAccessor<GenericRecord> total = context.getState(TOTAL);
        long rounds = read(context.getState(ROUNDS));
        long inRound = read(total) + 1;
        if (inRound == ROUND) {
            total.clear();
            context.getState(ROUNDS).set(record(rounds + 1));
        } else {
            total.set(record(inRound));
        }
        return rounds * ROUND + inRound;
    }

    /** The key's count, without counting anything. */
    public static long current(RuntimeContext context) {
        return read(context.getState(ROUNDS)) * ROUND + read(context.getState(TOTAL));
    }

    private static long read(StateAccessor<GenericRecord> state) {
        return state.get().map(r -> (Long) r.get("count")).orElse(0L);
    }

    private static GenericRecord record(long count) {
        GenericRecord r = new GenericData.Record(STATE);
        r.put("count", count);
        return r;
    }
}
