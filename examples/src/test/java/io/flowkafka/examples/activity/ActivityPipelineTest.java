package io.flowkafka.examples.activity;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The activity pipeline on {@link FlowTestDriver}: the example quoted in FlowTestDriver's Javadoc. */
class ActivityPipelineTest {
    @Test
    void shouldCountPerUserAndSendBadRecordsToDeadLetters() {
        // tag::test[]
        PipelineSpec spec = ActivityPipeline.spec("activity", "user-events", "user-activity-counts", 4);
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
            driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"view\",\"ts\":1002}");
            driver.pipeSource("user-events", "bob", "not json");

            assertThat(driver.readSinkJson("user-activity-counts"))
                    .containsExactly("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"alice\",\"count\":2}");
            assertThat(driver.stateForPayload("count", "totals", "events",
                    Map.of("user", "alice", "action", "view", "ts", 1002L)))
                    .hasValueSatisfying(totals -> assertThat(totals.get("count")).isEqualTo(2L));
            assertThat(driver.readDeadLetters()).singleElement()
                    .satisfies(dead -> assertThat(dead.computation()).isEqualTo("read"));
        }
        // end::test[]
    }

    @Test
    void shouldGiveTheSameMessageIdsWhenTheSameInputIsReplayed() {
        PipelineSpec spec = ActivityPipeline.spec("activity", "user-events", "user-activity-counts", 4);
        java.util.List<String> first;
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
            first = driver.readStream("events").stream().map(m -> m.getMessageId().toString()).toList();
        }
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
            assertThat(driver.readStream("events").stream().map(m -> m.getMessageId().toString()).toList())
                    .isEqualTo(first).hasSize(1);
        }
    }
}
