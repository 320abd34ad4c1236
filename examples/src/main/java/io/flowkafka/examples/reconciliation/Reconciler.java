package io.flowkafka.examples.reconciliation;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import java.util.Optional;
import org.apache.avro.generic.GenericRecord;

/**
 * The reconciler: an account update sets the account's state; a visit aligns the state with the ledger's row of the
 * key, read through the static-table joiner (read-only). A key in the ledger is set to its row (a visit arrives even
 * for an account the state does not hold yet); a key missing from the ledger is deleted. Each change is emitted.
 *
 * <p>Not thread-safe; the runtime makes one instance per task.
 */
public final class Reconciler implements RowFunction {
    /** A new reconciler; it keeps nothing between calls. */
    public Reconciler() {
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> state = context.getState(ReconciliationPipeline.ACCOUNT);
        GenericRecord row = state.newRecord();
        row.put("account", message.getPayload().get("account").toString());
        row.put("balance", message.getPayload().get("balance"));
        state.set(row);
    }

    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> state = context.getState(ReconciliationPipeline.ACCOUNT);
        Optional<GenericRecord> ledger = context.getExternalState(ReconciliationPipeline.LEDGER).get();
        Optional<GenericRecord> mine = state.get();
        if (ledger.isPresent()) {
            long balance = (Long) ledger.get().get("balance");
            if (mine.isEmpty() || (Long) mine.get().get("balance") != balance) {
                GenericRecord row = state.newRecord();
                row.put("account", ledger.get().get("account").toString());
                row.put("balance", balance);
                state.set(row);
                emit(output, context, row.get("account").toString(), "updated", balance);
            }
        } else if (mine.isPresent()) {
            state.clear();
            emit(output, context, mine.get().get("account").toString(), "deleted", (Long) mine.get().get("balance"));
        }
    }

    private static void emit(OutputCollector output, RuntimeContext context, String account, String action,
            long balance) {
        output.addMessage(context.createMessageBuilder(ReconciliationPipeline.CHANGES).set("account", account)
                .set("action", action).set("balance", balance).build());
    }
}
