package io.flowkafka.examples.external;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Flow's versioned reference behind an atomically switched pointer: a batch job writes a new version of a price
 * list with {@code io.flowkafka.runtime.VersionedReferenceWriter} and switches the pointer with one write; the
 * pricer joins every order with the price of the current version, sees a switch without a restart, and never
 * mixes two versions in one call.
 *
 * <pre>
 *   topic orders (JSON {"order_id", "sku"})
 *     -> read_orders (Source) -> orders
 *     -> pricer (key farm_hash(sku), sku; versioned joiner /prices on topic prices)
 *                                     -> priced (order_id, sku, price, version) -> KafkaSink topic priced
 *   topic prices (one partition, compacted): rows of every version + the pointer, written by the batch job
 * </pre>
 */
public final class ExternalStateJoin {
    /** The joiner's name. */
    public static final String PRICES = "/prices";
    private static final String NS = "io.flowkafka.examples.external";

    /** A row of the price list. */
    public static final Schema PRICE = SchemaBuilder.record("Price").namespace(NS).fields()
            .requiredLong("cents").requiredString("version").endRecord();
    /** An order with its price from the current version (-1 and version "" when the version has no price). */
    public static final Schema PRICED = SchemaBuilder.record("PricedOrder").namespace(NS).fields()
            .requiredString("order_id").requiredString("sku").requiredLong("cents").requiredString("version")
            .endRecord();

    private ExternalStateJoin() {
    }

    /** Prices an order with the row of its sku in the current version of the price list. */
    public static final class Pricer implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord order = message.getPayload();
            @Nullable GenericRecord price = context.getExternalState(PRICES).get().orElse(null);
            output.addMessage(context.createMessageBuilder("priced").set("order_id", order.get("order_id").toString())
                    .set("sku", order.get("sku").toString())
                    .set("cents", price == null ? -1L : (Long) price.get("cents"))
                    .set("version", price == null ? "" : price.get("version").toString()).build());
        }
    }

    /**
     * The spec.
     *
     * @param name the pipeline's name
     * @param ordersTopic the orders topic read
     * @param pricesTopic the versioned price list topic (one partition)
     * @param pricedTopic where priced orders go
     * @param cacheTtl how long a looked-up price may be reused; null: every order reads the store
     * @param partitions partitions of the pricer
     * @return the spec
     */
    public static PipelineSpec spec(String name, String ordersTopic, String pricesTopic, String pricedTopic,
            @Nullable Duration cacheTtl, int partitions) {
        ExternalStateJoinerSpec prices = ExternalStateJoinerSpec.of(PRICES).withTopic(pricesTopic, PRICE).asVersioned();
        ExternalStateJoinerSpec joiner = cacheTtl == null ? prices : prices.withCacheTtl(cacheTtl);
        return PipelineSpec.builder(name)
                .stream("raw_orders", StaticTableJoin.ORDER).stream("orders", StaticTableJoin.ORDER)
                .stream("priced", PRICED)
                .computation("read_orders", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_orders", "KafkaSource", Map.of("topics", ordersTopic))
                        .outputStreamIds("orders"))
                .computation("pricer", c -> StaticTableJoin.bySku(c.inputStreamIds("orders"))
                        .externalStateJoiner(joiner)
                        .processingFunction(Pricer::new).outputStreamIds("priced")
                        .sink("priced_topic", "KafkaSink", List.of("priced"), Map.of("topic", pricedTopic,
                                "key_column", "order_id"))
                        .desiredPartitionCount(partitions))
                .build();
    }
}
