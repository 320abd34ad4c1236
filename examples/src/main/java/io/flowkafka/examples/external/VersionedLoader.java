package io.flowkafka.examples.external;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.avro.generic.GenericRecord;

/**
 * The loader of a versioned reload (reference 001: "Each new version of a static table is a full reload of the entire
 * reference dataset into state"): writes each product row of the table {@value StaticTableJoin#TABLE} tagged with
 * its version, the timestamp of the static table it was read from, and acknowledges every row to the
 * {@link VersionLedger}. Its key visits delete the rows left behind by an older version: a row whose version is older
 * than the newest fully loaded version, as the ledger publishes it in {@value VersionLedger#VERSIONS}.
 *
 * <p>Rules: a row never goes back to an older version (two source partitions may emit rows of two versions in any
 * order); a row of the version loading or of the newest loaded one is never deleted; with no loaded version known
 * (no ledger row yet, a table missing or never complete) nothing is deleted.
 *
 * <p>Not thread-safe; the runtime makes one instance per task.
 */
public final class VersionedLoader implements RowFunction {
    private final Supplier<GenericRecord> ledgerKey;
    private GenericRecord ledger;

    /**
     * A loader.
     *
     * @param ledgerKey the key of the ledger's row in {@value VersionLedger#VERSIONS} (read at the first visit)
     */
    public VersionedLoader(Supplier<GenericRecord> ledgerKey) {
        this.ledgerKey = ledgerKey;
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        GenericRecord p = message.getPayload();
        long version = message.getEventTimestamp() / 1_000_000L; // the table's timestamp, epoch ms
        StateAccessor<GenericRecord> row = context.getExternalState(StaticTableJoin.TABLE);
        Optional<GenericRecord> mine = row.get();
        if (mine.isEmpty() || versionOf(mine.get()) <= version) {
            String name = p.get("name").toString();
            if (name.isEmpty()) {
                row.clear();
            } else {
                GenericRecord r = row.newRecord();
                r.put("sku", p.get("sku").toString());
                r.put("name", name);
                r.put("version", version);
                row.set(r);
            }
        }
        output.addMessage(context.createMessageBuilder("loaded").setPayload(p).build());
        // every row is acknowledged, also one not written: the ledger counts the table's rows
        output.addMessage(context.createMessageBuilder(VersionLedger.ACKS).set("sku", VersionLedger.LEDGER_SKU)
                .set("version", version).build());
    }

    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> row = context.getExternalState(StaticTableJoin.TABLE);
        Optional<GenericRecord> mine = row.get();
        if (mine.isEmpty()) {
            return;
        }
        if (ledger == null) {
            ledger = ledgerKey.get();
        }
        Optional<GenericRecord> loaded = context.getExternalState(VersionLedger.VERSIONS, ledger).get();
        if (loaded.isPresent() && versionOf(mine.get()) < versionOf(loaded.get())) {
            row.clear(); // missing from a fully loaded newer version
        }
    }

    private static long versionOf(GenericRecord r) {
        return (Long) r.get("version");
    }
}
