package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.FlowTestDriver;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The loader + enricher pattern on the test driver. */
class StaticTableJoinTest {
    private static FlowTestDriver driver() {
        return FlowTestDriver.create(StaticTableJoin.spec("shop", "products", "orders", "loaded", "enriched", 2));
    }

    private static void product(FlowTestDriver d, String sku, String name) {
        d.pipeSource("products", sku, "{\"sku\":\"" + sku + "\",\"name\":\"" + name + "\"}");
    }

    private static void order(FlowTestDriver d, String id, String sku) {
        d.pipeSource("orders", id, "{\"order_id\":\"" + id + "\",\"sku\":\"" + sku + "\"}");
    }

    @Test
    void anOrderIsEnrichedWithTheRowTheLoaderWroteForItsProduct() {
        try (FlowTestDriver d = driver()) {
            order(d, "o1", "s1");
            product(d, "s1", "kettle");
            product(d, "s2", "teapot");
            order(d, "o2", "s1");
            order(d, "o3", "s2");
            assertThat(d.readSinkJson("enriched")).containsExactly(
                    "{\"order_id\":\"o1\",\"sku\":\"s1\",\"name\":\"unknown\"}",
                    "{\"order_id\":\"o2\",\"sku\":\"s1\",\"name\":\"kettle\"}",
                    "{\"order_id\":\"o3\",\"sku\":\"s2\",\"name\":\"teapot\"}");
            assertThat(d.readSinkJson("loaded")).hasSize(2);
            assertThat(d.externalTable("loader", StaticTableJoin.TABLE).get(Map.of("sku", "s2")))
                    .hasValueSatisfying(r -> assertThat(r.get("name").toString()).isEqualTo("teapot"));
        }
    }

    @Test
    void anUpdateOrDeleteOfAProductIsSeenByTheNextOrder() {
        try (FlowTestDriver d = driver()) {
            product(d, "s1", "kettle");
            product(d, "s1", "steel kettle");
            order(d, "o1", "s1");
            product(d, "s1", "");
            order(d, "o2", "s1");
            assertThat(d.readSinkJson("enriched")).containsExactly(
                    "{\"order_id\":\"o1\",\"sku\":\"s1\",\"name\":\"steel kettle\"}",
                    "{\"order_id\":\"o2\",\"sku\":\"s1\",\"name\":\"unknown\"}");
        }
    }
}
