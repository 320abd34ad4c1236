package io.flowkafka.examples.reconciliation;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;

/**
 * A minimal pipeline around {@code TStaticTableKeyVisitorJoiner} that records every visit: the reconciliation
 * pipeline's key, state and joiner, but a visit changes nothing and emits one record of what it saw (the key, the
 * pass, the partition, the instance, whether the key has state, the ledger row's balance and whether the row was
 * read-only). {@code StaticTableJoinerIT} counts the records.
 */
public final class LedgerVisitPipeline {
    /** The computation. */
    public static final String COMPUTATION = "visit";
    /** The key-visitor stream. */
    public static final String VISITOR = "ledger_iter";
    /** The id this JVM's visits carry (set by {@link LedgerVisitMain}). */
    static volatile String instance = "local";

    /** One visit. {@code row_balance} is -1 when the ledger has no row of the key. */
    public static final Schema VISIT = SchemaBuilder.record("LedgerVisit").namespace("io.flowkafka.examples.recon")
            .fields().requiredString("account").requiredLong("pass").requiredInt("partition")
            .requiredString("instance").requiredBoolean("in_state").requiredLong("row_balance")
            .requiredBoolean("read_only").endRecord();

    private LedgerVisitPipeline() {
    }

    /** Sets the state on an account update; records each visit. */
    public static final class Recorder implements RowFunction {
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
            StateAccessor<GenericRecord> ledger = context.getExternalState(ReconciliationPipeline.LEDGER);
            Optional<GenericRecord> row = ledger.get();
            boolean readOnly;
            try {
                ledger.clear();
                readOnly = false;
            } catch (RuntimeException e) {
                readOnly = true; // "passes the table row to ProcessVisit as a read-only state"
            }
            output.addMessage(context.createMessageBuilder("visits")
                    .set("account", visit.getKey().get("account").toString()).set("pass", visit.getPass())
                    .set("partition", context.getPartition()).set("instance", instance)
                    .set("in_state", context.getState(ReconciliationPipeline.ACCOUNT).get().isPresent())
                    .set("row_balance", row.map(r -> (Long) r.get("balance")).orElse(-1L))
                    .set("read_only", readOnly).build());
        }
    }

    /**
     * The spec.
     *
     * @param name the pipeline's name
     * @param accountsTopic the topic of account updates (JSON {@code {"account", "balance"}})
     * @param visitsTopic where visit records go (JSON)
     * @param tablesPath the ledger's tables directory
     * @param period how long one pass takes
     * @param partitions the computation's partitions
     * @return the spec
     */
    public static PipelineSpec spec(String name, String accountsTopic, String visitsTopic, String tablesPath,
            Duration period, int partitions) {
        return PipelineSpec.builder(name)
                .stream("raw_accounts", ReconciliationPipeline.ACCOUNT_SCHEMA)
                .stream("accounts", ReconciliationPipeline.ACCOUNT_SCHEMA)
                .stream("visits", VISIT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_accounts", "KafkaSource", Map.of("topics", accountsTopic))
                        .outputStreamIds("accounts"))
                .computation(COMPUTATION, c -> c.inputStreamIds("accounts")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(account)")
                        .groupBy("account", ColumnType.STRING, null)
                        .state(ReconciliationPipeline.ACCOUNT, ReconciliationPipeline.ACCOUNT_SCHEMA)
                        .externalStateJoiner(new ExternalStateJoinerSpec(ReconciliationPipeline.LEDGER,
                                "NYT::NFlow::TStaticTableKeyVisitorJoiner", null, null, null, false,
                                Map.of("tables_path", tablesPath)))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder(VISITOR).names(ReconciliationPipeline.ACCOUNT)
                                .externalNames(ReconciliationPipeline.LEDGER).period(period).finite(false).build())
                        .streamsDependency("visits", List.of("accounts", VISITOR))
                        .processingFunction(Recorder::new)
                        .outputStreamIds("visits")
                        .sink("visits_topic", "KafkaSink", List.of("visits"), Map.of("topic", visitsTopic,
                                "key_column", "account"))
                        .desiredPartitionCount(partitions))
                .build();
    }
}
