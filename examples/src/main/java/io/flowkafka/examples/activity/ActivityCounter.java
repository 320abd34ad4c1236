package io.flowkafka.examples.activity;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Counts events per user in per-key state and emits the running total after each event.
 */
public final class ActivityCounter implements RowFunction {
    // tag::function[]
    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> totals = context.getState("totals");
        long count = totals.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
        GenericRecord updated = new GenericData.Record(ActivityPipeline.TOTALS_SCHEMA);
        updated.put("count", count);
        totals.set(updated);
        output.addMessage(context.createMessageBuilder("activity_counts")
                .set("user", message.getPayload().get("user").toString())
                .set("count", count)
                .build());
    }
    // end::function[]
}
