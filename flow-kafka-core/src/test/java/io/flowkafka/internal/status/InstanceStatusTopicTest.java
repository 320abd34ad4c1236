package io.flowkafka.internal.status;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The merged view: live instances by id, and an instance silent for more than three intervals listed as gone. */
class InstanceStatusTopicTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode part(String id, long timestamp) {
        return JSON.createObjectNode().put("instance", id).put("timestamp", timestamp);
    }

    @Test
    void shouldListAnInstanceSilentForMoreThanThreeIntervalsAsGone() {
        long now = 100_000;
        ObjectNode view = InstanceStatusTopic.view("p", now, 2_000, Map.of(
                "b", part("b", now - 6_000), "a", part("a", now - 1_000), "c", part("c", now - 6_001)));

        assertThat(view.path("pipeline").asText()).isEqualTo("p");
        assertThat(view.path("interval_ms").asLong()).isEqualTo(2_000);
        assertThat(view.path("instances").findValuesAsText("instance")).containsExactly("a", "b");
        assertThat(view.path("gone").findValuesAsText("instance")).containsExactly("c");
    }
}
