package io.flowkafka.examples.docs;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import java.time.Duration;
import org.apache.avro.generic.GenericRecord;

/**
 * The process function of {@code page-sessions.yaml}: counts a user's page views in state and, 30 s of event
 * time after the first, emits the count. Its spec is a YAML file, so it takes the state's schema from the
 * spec ({@link StateAccessor#newRecord()}) rather than from a Java copy.
 */
public final class PageSessions implements RowFunction {
    private static final long MS = 1_000_000L; // event timestamps are nanoseconds
    private static final Duration SESSION = Duration.ofSeconds(30);

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> state = context.getState("session");
        GenericRecord s = state.get().orElseGet(state::newRecord);
        if (s.get("first_ts") == null) {
            long ts = (Long) message.getPayload().get("ts");
            s.put("first_ts", ts);
            output.addTimer(ts * MS + SESSION.toNanos(), ts * MS); // the summary, 30 s of event time later
        }
        s.put("views", (Long) s.get("views") + 1);
        state.set(s);
    }

    @Override
    public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
        context.getState("session").get().ifPresent(s -> output.addMessage(context.createMessageBuilder("summaries")
                .set("user", timer.getKey().get("user").toString()).set("views", s.get("views")).build()));
        context.getState("session").clear();
    }
}
