package io.flowkafka.examples.reconciliation;

import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.connectors.statictable.TablesDirectory;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;

/**
 * The reconciliation pipeline: accounts kept in a computation's own state, aligned pass after pass with a ledger
 * published as static tables (the newest table of a directory, written by a batch job).
 *
 * <pre>
 *   topic accounts (JSON {"account", "balance"})
 *     -> read (Source)                                     stream raw_accounts -> accounts
 *     -> reconcile (Transform, key farm_hash(account), account;
 *                   state account;
 *                   joiner /ledger: TStaticTableKeyVisitorJoiner over tables_path;
 *                   key visitor reconcile_iter: names [account], external_names [/ledger])
 *     -> changes -> KafkaSink topic changes (JSON {"account", "action", "balance"})
 * </pre>
 *
 * <p>Reference 000: "a periodic scan aligns the computation's own state with the external table—keys present in the
 * table are updated, and keys missing from it are deleted". {@link Reconciler} does it in its visits.
 */
public final class ReconciliationPipeline {
    /** The reconciling computation. */
    public static final String RECONCILE = "reconcile";
    /** Its state of one account. */
    public static final String ACCOUNT = "account";
    /** The static-table joiner of the ledger. */
    public static final String LEDGER = "/ledger";
    /** The key-visitor stream. */
    public static final String VISITOR = "reconcile_iter";
    /** The output stream of changes made by reconciliation. */
    public static final String CHANGES = "changes";

    private static final String NS = "io.flowkafka.examples.reconciliation";

    /** Payload of {@code accounts}, and the {@value #ACCOUNT} state. */
    public static final Schema ACCOUNT_SCHEMA = SchemaBuilder.record("Account").namespace(NS).fields()
            .requiredString("account").requiredLong("balance").endRecord();
    /**
     * A ledger row: the key columns first ({@code hash = farm_hash(account)}, {@code account}), as the joiner requires,
     * then the balance.
     */
    public static final Schema LEDGER_SCHEMA = SchemaBuilder.record("LedgerRow").namespace(NS).fields()
            .requiredLong("hash").requiredString("account").requiredLong("balance").endRecord();
    /** Payload of {@code changes}: {@code action} is {@code updated} or {@code deleted}. */
    public static final Schema CHANGE_SCHEMA = SchemaBuilder.record("Change").namespace(NS).fields()
            .requiredString("account").requiredString("action").requiredLong("balance").endRecord();

    private ReconciliationPipeline() {
    }

    /**
     * The spec.
     *
     * @param name the pipeline's name
     * @param accountsTopic the topic of account updates
     * @param changesTopic the topic changes are written to
     * @param tablesPath the ledger's tables directory; the newest table is read at each pass
     * @param period how long one reconciliation pass takes
     * @param partitions the partition count of the computations
     * @return the spec, not yet validated
     */
    public static PipelineSpec spec(String name, String accountsTopic, String changesTopic, String tablesPath,
            Duration period, int partitions) {
        // tag::spec[]
        return PipelineSpec.builder(name)
                .stream("raw_accounts", ACCOUNT_SCHEMA)
                .stream("accounts", ACCOUNT_SCHEMA)
                .stream(CHANGES, CHANGE_SCHEMA)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_accounts", "KafkaSource", Map.of("topics", accountsTopic))
                        .outputStreamIds("accounts"))
                .computation(RECONCILE, c -> c.inputStreamIds("accounts")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(account)")
                        .groupBy("account", ColumnType.STRING, null)
                        .state(ACCOUNT, ACCOUNT_SCHEMA)
                        .externalStateJoiner(new ExternalStateJoinerSpec(LEDGER,
                                "NYT::NFlow::TStaticTableKeyVisitorJoiner", null, null, null, false,
                                Map.of("tables_path", tablesPath)))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder(VISITOR).names(ACCOUNT).externalNames(LEDGER)
                                .period(period).finite(false).build())
                        .streamsDependency(CHANGES, List.of("accounts", VISITOR))
                        .processingFunction(Reconciler::new)
                        .outputStreamIds(CHANGES)
                        .sink("changes_topic", "KafkaSink", List.of(CHANGES), Map.of("topic", changesTopic,
                                "key_column", "account"))
                        .desiredPartitionCount(partitions))
                .build();
        // end::spec[]
    }

    /**
     * Runs the pipeline against a cluster until the process is stopped; publish ledger tables with
     * {@link #writeLedger} (or any Avro writer, rows sorted by the key).
     *
     * @param args bootstrap servers, accounts topic, changes topic, ledger tables directory
     * @throws Exception if the runtime cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ReconciliationPipeline BOOTSTRAP_SERVERS ACCOUNTS_TOPIC CHANGES_TOPIC TABLES_DIR");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (FlowRuntime runtime = FlowRuntime.create(spec("reconciliation", args[1], args[2], args[3],
                Duration.ofMinutes(1), 4), props)) {
            runtime.start();
            Runtime.getRuntime().addShutdownHook(new Thread(runtime::close));
            Thread.currentThread().join();
        }
    }

    /**
     * Publishes a ledger table, sorting its rows by the key ({@code hash} unsigned, then {@code account}) as the
     * joiner requires.
     *
     * @param directory the tables directory
     * @param table the table's name, e.g. its ISO 8601 timestamp {@code 2026-12-03T00:00:00Z}
     * @param rows rows of {@link #LEDGER_SCHEMA}, in any order, one per account
     * @throws IOException if the table cannot be written
     */
    public static void writeLedger(TablesDirectory directory, String table, List<GenericRecord> rows)
            throws IOException {
        List<GenericRecord> sorted = new ArrayList<>(rows);
        sorted.sort((a, b) -> {
            int c = Long.compareUnsigned((Long) a.get("hash"), (Long) b.get("hash"));
            return c != 0 ? c : a.get("account").toString().compareTo(b.get("account").toString());
        });
        StaticTableWriter.write(directory, table, LEDGER_SCHEMA, null, sorted);
    }
}
