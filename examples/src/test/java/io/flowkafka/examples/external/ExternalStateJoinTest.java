package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.VersionedReferenceWriter;
import io.flowkafka.testing.FlowTestDriver;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** The versioned reference on the test driver: enrich with v1, switch, the same key gets v2. */
class ExternalStateJoinTest {
    static GenericRecord price(long cents, String version) {
        GenericRecord r = new GenericData.Record(ExternalStateJoin.PRICE);
        r.put("cents", cents);
        r.put("version", version);
        return r;
    }

    private static void order(FlowTestDriver d, String id, String sku) {
        d.pipeSource("orders", id, "{\"order_id\":\"" + id + "\",\"sku\":\"" + sku + "\"}");
    }

    @Test
    void theSameKeyIsPricedWithV1ThenWithV2AfterTheSwitch() {
        try (FlowTestDriver d = FlowTestDriver.create(ExternalStateJoin.spec("pricing", "orders", "prices", "priced",
                null, 2));
                VersionedReferenceWriter prices = d.versionedReferenceWriter("pricer", ExternalStateJoin.PRICES)) {
            prices.writeVersion("v1", Map.of(prices.key(Map.of("sku", "s1")), price(100, "v1")));
            prices.switchTo("v1");
            order(d, "o1", "s1");
            prices.writeVersion("v2", Map.of(prices.key(Map.of("sku", "s1")), price(120, "v2")));
            order(d, "o2", "s1");
            prices.switchTo("v2");
            order(d, "o3", "s1");
            assertThat(d.readSinkJson("priced")).containsExactly(
                    "{\"order_id\":\"o1\",\"sku\":\"s1\",\"cents\":100,\"version\":\"v1\"}",
                    "{\"order_id\":\"o2\",\"sku\":\"s1\",\"cents\":100,\"version\":\"v1\"}",
                    "{\"order_id\":\"o3\",\"sku\":\"s1\",\"cents\":120,\"version\":\"v2\"}");
        }
    }
}
