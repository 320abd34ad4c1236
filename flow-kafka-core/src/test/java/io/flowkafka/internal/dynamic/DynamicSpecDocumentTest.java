package io.flowkafka.internal.dynamic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A record of the dynamic-spec topic: the whole document and its version, as JSON. */
class DynamicSpecDocumentTest {
    private static DynamicSpecDocument parse(String json) {
        return DynamicSpecDocument.fromJson(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void shouldRoundTripTheWholeDocumentWithItsVersion() {
        Map<String, Object> spec = Map.of("computations", Map.of("c", Map.of("key_visitor_streams",
                Map.of("v", Map.of("period", "1h", "max_scan_rows_per_iteration", 5000, "finite", false)))));
        DynamicSpecDocument doc = new DynamicSpecDocument(3, spec);
        assertThat(DynamicSpecDocument.fromJson(doc.toJson())).isEqualTo(doc);
        assertThat(new String(doc.toJson(), StandardCharsets.UTF_8)).startsWith("{\"version\":3,\"dynamic_spec\":");
    }

    @Test
    void shouldRejectARecordThatIsNotADocumentSayingWhy() {
        assertThatThrownBy(() -> parse("not json")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> parse("{\"dynamic_spec\": {}}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"version\" must be a non-negative integer but was null");
        assertThatThrownBy(() -> parse("{\"version\": 1.5, \"dynamic_spec\": {}}"))
                .hasMessageContaining("\"version\" must be a non-negative integer but was 1.5");
        assertThatThrownBy(() -> parse("{\"version\": -1, \"dynamic_spec\": {}}"))
                .hasMessageContaining("\"version\" must be a non-negative integer");
        assertThatThrownBy(() -> parse("{\"version\": 1, \"dynamic_spec\": [1]}"))
                .hasMessageContaining("\"dynamic_spec\" must be an object but was [1]");
    }
}
