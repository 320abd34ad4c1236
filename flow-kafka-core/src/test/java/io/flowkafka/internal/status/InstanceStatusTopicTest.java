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

    @Test
    void shouldForgetAnInstanceSilentForAnHourOrAHundredIntervals() {
        // a crashed pod writes no tombstone: the view would keep every pod that ever crashed
        long now = 10_000_000;
        Map<String, JsonNode> parts = Map.of("live", part("live", now - 1_000),
                "gone", part("gone", now - InstanceStatusTopic.FORGET_AFTER_MS),
                "dead", part("dead", now - InstanceStatusTopic.FORGET_AFTER_MS - 1));
        assertThat(InstanceStatusTopic.forgotten(parts, now, 2_000)).containsExactly("dead");
        assertThat(InstanceStatusTopic.forgotten(parts, now, 60_000)).as("100 intervals of a minute").isEmpty();
    }
}
