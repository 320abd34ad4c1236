package io.flowkafka.examples.external;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.connectors.statictable.StaticTableSource;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.ComputationCalls;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Flow's "import a reference table into state" pattern: a loader writes the rows of a reference topic into an
 * external table through its manager, and an enricher joins every order with the row of its product through a
 * read-only joiner.
 *
 * <pre>
 *   topic products (JSON {"sku", "name"}; empty name: delete)
 *     -> read_products (Source) -> products
 *     -> loader (key farm_hash(sku), sku; manager /products)  writes the table, emits "loaded" (one per row write)
 *                                                             -> KafkaSink topic loaded (key sku)
 *   topic orders (JSON {"order_id", "sku"})
 *     -> read_orders (Source) -> orders
 *     -> enricher (key farm_hash(sku), sku; joiner /products)  -> enriched -> KafkaSink topic enriched (key order_id)
 * </pre>
 *
 * <p>The two computations share their group-by key, so the enricher's key bytes find the loader's rows. The
 * loader's row writes commit with its "loaded" outputs in one transaction; the enricher reads the table through a
 * global store, so it sees a row a short while after the loader committed it (eventually consistent).
 *
 * <p>{@link #specFromTables} reads the reference from static tables instead, version after version, and deletes the
 * rows a fully loaded newer version no longer holds ({@link VersionedLoader}, {@link VersionLedger}).
 */
public final class StaticTableJoin {
    /** The manager's and the joiner's name. */
    public static final String TABLE = "/products";
    private static final String NS = "io.flowkafka.examples.external";

    /** A reference row as read from the products topic; an empty name deletes the product. */
    public static final Schema PRODUCT = SchemaBuilder.record("Product").namespace(NS).fields()
            .requiredString("sku").requiredString("name").endRecord();
    /** A row of the {@value #TABLE} table. */
    public static final Schema PRODUCT_ROW = SchemaBuilder.record("ProductRow").namespace(NS).fields()
            .requiredString("sku").requiredString("name").endRecord();
    /** A row of the {@value #TABLE} table in the versioned reload: with the timestamp of its table, epoch ms. */
    public static final Schema VERSIONED_ROW = SchemaBuilder.record("VersionedProductRow").namespace(NS).fields()
            .requiredString("sku").requiredString("name").requiredLong("version").endRecord();
    /** The loader's key-visitor stream of the versioned reload: deletes rows of replaced versions. */
    public static final String CLEANUP = "cleanup";
    /** An order. */
    public static final Schema ORDER = SchemaBuilder.record("Order").namespace(NS).fields()
            .requiredString("order_id").requiredString("sku").endRecord();
    /** An order with its product's name ({@code "unknown"} when the table has no row). */
    public static final Schema ENRICHED = SchemaBuilder.record("EnrichedOrder").namespace(NS).fields()
            .requiredString("order_id").requiredString("sku").requiredString("name").endRecord();

    private StaticTableJoin() {
    }

    /** Writes each product into the table (or deletes it), and emits it to {@code loaded}. */
    public static final class Loader implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord p = message.getPayload();
            StateAccessor<GenericRecord> row = context.getExternalState(TABLE);
            String name = p.get("name").toString();
            if (name.isEmpty()) {
                row.clear();
            } else {
                GenericRecord r = row.newRecord();
                r.put("sku", p.get("sku").toString());
                r.put("name", name);
                row.set(r);
            }
            output.addMessage(context.createMessageBuilder("loaded").setPayload(p).build());
        }
    }

    /** Enriches an order with the name of its product. */
    public static final class Enricher implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord order = message.getPayload();
            String name = context.getExternalState(TABLE).get().map(r -> r.get("name").toString()).orElse("unknown");
            output.addMessage(context.createMessageBuilder("enriched").set("order_id", order.get("order_id").toString())
                    .set("sku", order.get("sku").toString()).set("name", name).build());
        }
    }

    /**
     * The spec.
     *
     * @param name the pipeline's name
     * @param productsTopic the reference topic read
     * @param ordersTopic the orders topic read
     * @param loadedTopic where the loader's acknowledgements go
     * @param enrichedTopic where enriched orders go
     * @param partitions partitions of the loader and the enricher
     * @return the spec
     */
    public static PipelineSpec spec(String name, String productsTopic, String ordersTopic, String loadedTopic,
            String enrichedTopic, int partitions) {
        return PipelineSpec.builder(name)
                .stream("raw_products", PRODUCT).stream("products", PRODUCT).stream("loaded", PRODUCT)
                .stream("raw_orders", ORDER).stream("orders", ORDER).stream("enriched", ENRICHED)
                .computation("read_products", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_products", "KafkaSource", Map.of("topics", productsTopic))
                        .outputStreamIds("products"))
                .computation("read_orders", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_orders", "KafkaSource", Map.of("topics", ordersTopic))
                        .outputStreamIds("orders"))
                .computation("loader", c -> bySku(c.inputStreamIds("products"))
                        .externalStateManager(ExternalStateManagerSpec.of(TABLE, PRODUCT_ROW))
                        .processingFunction(Loader::new).outputStreamIds("loaded")
                        .sink("loaded_topic", "KafkaSink", List.of("loaded"), Map.of("topic", loadedTopic,
                                "key_column", "sku"))
                        .desiredPartitionCount(partitions))
                .computation("enricher", c -> bySku(c.inputStreamIds("orders"))
                        .externalStateJoiner(ExternalStateJoinerSpec.of(TABLE))
                        .processingFunction(Enricher::new).outputStreamIds("enriched")
                        .sink("enriched_topic", "KafkaSink", List.of("enriched"), Map.of("topic", enrichedTopic,
                                "key_column", "order_id"))
                        .desiredPartitionCount(partitions))
                .build();
    }

    /**
     * Runs {@link #specFromTables} against a cluster until the process is stopped: the newest table of the
     * directory is loaded (publish tables with {@code StaticTableWriter}), orders are enriched from it.
     *
     * @param args bootstrap servers, product tables directory, orders topic, loaded topic, enriched topic
     * @throws Exception if the runtime cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: StaticTableJoin BOOTSTRAP_SERVERS TABLES_DIR ORDERS_TOPIC LOADED_TOPIC "
                    + "ENRICHED_TOPIC");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (FlowRuntime runtime = FlowRuntime.create(specFromTables("static-table-join", args[1], args[2], args[3],
                args[4], 4), props)) {
            runtime.start();
            Runtime.getRuntime().addShutdownHook(new Thread(runtime::close));
            Thread.currentThread().join();
        }
    }

    /**
     * The spec reading the reference from a directory of static tables, with the default {@link Reload}.
     *
     * @param name the pipeline's name
     * @param tablesPath the directory of product tables, rows of {@link #PRODUCT}
     * @param ordersTopic the orders topic read
     * @param loadedTopic where the loader's acknowledgements go
     * @param enrichedTopic where enriched orders go
     * @param partitions partitions of the reader, the loader and the enricher
     * @return the spec
     * @see #specFromTables(String, String, String, String, String, int, Reload)
     */
    public static PipelineSpec specFromTables(String name, String tablesPath, String ordersTopic, String loadedTopic,
            String enrichedTopic, int partitions) {
        return specFromTables(name, tablesPath, ordersTopic, loadedTopic, enrichedTopic, partitions, Reload.DEFAULT);
    }

    /**
     * How the versioned reload runs.
     *
     * @param cleanupPeriod how long one pass of the loader's cleanup visits over the table takes
     * @param sourceParameters more parameters of the static-table source, e.g. {@code max_rows_per_second}
     */
    public record Reload(Duration cleanupPeriod, Map<String, Object> sourceParameters) {
        /** A pass a minute, the source's defaults. */
        public static final Reload DEFAULT = new Reload(Duration.ofMinutes(1), Map.of());
    }

    /**
     * The spec reading the reference from a directory of static tables (reference 001, "Importing a static table
     * into state"): {@code read_products} reads the newest table of {@code tablesPath} with the static-table source
     * ({@code read_mode: newest}), and a newer table starts a new run, a full reload through the
     * {@link VersionedLoader}, which tags each row with its table's timestamp. "This scheme doesn't automatically
     * clean up deleted rows": here the {@link VersionLedger} counts the rows loaded per version, publishes a version
     * once all its rows are loaded, and the loader's key visits ({@code cleanup}, over the table) delete the rows of
     * older versions. Tables are written with {@link io.flowkafka.connectors.statictable.StaticTableWriter} and
     * named by their ISO 8601 timestamp, e.g. {@code 2026-12-03T00:00:00Z}; rows carry their table's timestamp, so
     * {@code use_planned_timestamps} must stay off.
     *
     * <pre>
     *   tables_path -> read_products (newest table) -> products
     *     -> loader (manager /products, joiner /versions; key visitor cleanup over /products) -> loaded, load_acks
     *     -> versions (key sku = ""; manager /versions: the newest fully loaded version; key visitor recheck)
     * </pre>
     *
     * @param name the pipeline's name
     * @param tablesPath the directory of product tables, rows of {@link #PRODUCT}
     * @param ordersTopic the orders topic read
     * @param loadedTopic where the loader's acknowledgements go
     * @param enrichedTopic where enriched orders go
     * @param partitions partitions of the reader, the loader and the enricher
     * @param reload the cleanup's period and the source's extra parameters
     * @return the spec
     * @throws IllegalArgumentException if the source parameters turn {@code use_planned_timestamps} on
     */
    public static PipelineSpec specFromTables(String name, String tablesPath, String ordersTopic, String loadedTopic,
            String enrichedTopic, int partitions, Reload reload) {
        if (Boolean.parseBoolean(String.valueOf(reload.sourceParameters().get("use_planned_timestamps")))) {
            throw new IllegalArgumentException("the versioned reload tags rows with their table's timestamp, the "
                    + "source's default message timestamp: remove use_planned_timestamps from the source parameters");
        }
        Map<String, Object> source = new HashMap<>(reload.sourceParameters());
        source.put("tables_path", tablesPath);
        source.put("read_mode", "newest");
        AtomicReference<PipelineSpec> built = new AtomicReference<>();
        Supplier<GenericRecord> ledgerKey = () -> ledgerKey(built.get());
        PipelineSpec spec = PipelineSpec.builder(name)
                .stream("raw_products", PRODUCT).stream("products", PRODUCT).stream("loaded", PRODUCT)
                .stream(VersionLedger.ACKS, VersionLedger.ACK)
                .stream("raw_orders", ORDER).stream("orders", ORDER).stream("enriched", ENRICHED)
                .computation("read_products", c -> c.kind(ComputationKind.SOURCE).desiredPartitionCount(partitions)
                        .source("raw_products", StaticTableSource.FLOW_NAME, source)
                        .outputStreamIds("products"))
                .computation("read_orders", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_orders", "KafkaSource", Map.of("topics", ordersTopic))
                        .outputStreamIds("orders"))
                .computation("loader", c -> bySku(c.inputStreamIds("products"))
                        .externalStateManager(ExternalStateManagerSpec.of(TABLE, VERSIONED_ROW))
                        .externalStateJoiner(ExternalStateJoinerSpec.of(VersionLedger.VERSIONS))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder(CLEANUP).externalNames(TABLE)
                                .period(reload.cleanupPeriod()).finite(false).build())
                        .processingFunction(() -> new VersionedLoader(ledgerKey))
                        .outputStreamIds("loaded", VersionLedger.ACKS)
                        .sink("loaded_topic", "KafkaSink", List.of("loaded"), Map.of("topic", loadedTopic,
                                "key_column", "sku"))
                        .desiredPartitionCount(partitions))
                .computation(VersionLedger.COMPUTATION, c -> VersionLedger.locating(bySku(c.inputStreamIds(
                                VersionLedger.ACKS))
                        .state(VersionLedger.COUNTS_STATE, VersionLedger.COUNTS)
                        .externalStateManager(ExternalStateManagerSpec.of(VersionLedger.VERSIONS,
                                VersionLedger.LOADED))
                        .parameter(VersionLedger.TABLES_PATH, tablesPath), reload.sourceParameters())
                        .keyVisitorStream(KeyVisitorStreamSpec.builder(VersionLedger.RECHECK)
                                .names(VersionLedger.COUNTS_STATE).period(reload.cleanupPeriod()).finite(false)
                                .build())
                        .processingFunction(VersionLedger::new)
                        .desiredPartitionCount(1))
                .computation("enricher", c -> bySku(c.inputStreamIds("orders"))
                        .externalStateJoiner(ExternalStateJoinerSpec.of(TABLE))
                        .processingFunction(Enricher::new).outputStreamIds("enriched")
                        .sink("enriched_topic", "KafkaSink", List.of("enriched"), Map.of("topic", enrichedTopic,
                                "key_column", "order_id"))
                        .desiredPartitionCount(partitions))
                .build();
        built.set(spec);
        return spec;
    }

    /** The key of the ledger's row: {@code sku = ""} with its {@code farm_hash}, computed as the runtime does. */
    static GenericRecord ledgerKey(PipelineSpec spec) {
        GenericRecord ack = new GenericData.Record(VersionLedger.ACK);
        ack.put("sku", VersionLedger.LEDGER_SKU);
        ack.put("version", 0L);
        return ComputationCalls.of(spec, VersionLedger.COMPUTATION).keyOf(VersionLedger.ACKS, ack);
    }

    /** The group-by key both computations share: a joiner finds the manager's rows by the same key bytes. */
    static ComputationSpec.Builder bySku(ComputationSpec.Builder c) {
        return c.groupBy("hash", ColumnType.UINT64, "farm_hash(sku)").groupBy("sku", ColumnType.STRING, null);
    }
}
