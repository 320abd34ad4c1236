package io.flowkafka.examples.auditor;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Writes each user's last login to the external table {@value AuditorPipeline#SESSIONS} through its manager: the
 * table's one writer. A login older than the row's is ignored (logins may arrive out of order).
 *
 * <p>Not thread-safe; the runtime makes one instance per task.
 */
public final class LoginTracker implements RowFunction {
    /** A new tracker; it keeps nothing between calls. */
    public LoginTracker() {
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        long at = (Long) message.getPayload().get("ts");
        var row = context.getExternalState(AuditorPipeline.SESSIONS);
        if (row.get().map(r -> (Long) r.get("last_login_ms") >= at).orElse(false)) {
            return;
        }
        GenericRecord r = new GenericData.Record(AuditorPipeline.SESSION_SCHEMA);
        r.put("user", message.getPayload().get("user").toString());
        r.put("last_login_ms", at);
        row.set(r);
    }
}
