package io.flowkafka.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.FlowTestDriver;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** A YAML spec on the test driver: pipe, then assert; the state record comes from the spec's schema. */
class PageSessionsTest {
    static final Path SPEC = Path.of("src/main/resources/io/flowkafka/examples/docs/page-sessions.yaml");

    @Test
    void shouldSummarizeEachUsersViewsThirtySecondsAfterTheFirst() {
        Properties props = new Properties();
        props.put("flow.spec.warnings", "fail"); // a misspelled field fails the test instead of being ignored
        try (FlowTestDriver driver = FlowTestDriver.create(SPEC, props)) {
            driver.pipeSource("page-views", "alice", "{\"user\":\"alice\",\"page\":\"home\",\"ts\":1000}");
            driver.pipeSource("page-views", "alice", "{\"user\":\"alice\",\"page\":\"cart\",\"ts\":2000}");
            driver.pipeSource("page-views", "bob", "{\"user\":\"bob\",\"page\":\"home\",\"ts\":3000}");
            assertThat(driver.readSinkJson("session-summaries")).as("no session is 30 s old yet").isEmpty();
            assertThat(driver.state("sessions", "session", Map.of("user", "alice")))
                    .hasValueSatisfying(s -> assertThat(s.get("views")).isEqualTo(2L));

            // 5 s out-of-orderness: a view at 40 s moves the watermark to 35 s, past both sessions' 30 s
            driver.pipeSource("page-views", "carol", "{\"user\":\"carol\",\"page\":\"home\",\"ts\":40000}");
            assertThat(driver.readSinkJson("session-summaries")).containsExactlyInAnyOrder(
                    "{\"user\":\"alice\",\"views\":2}", "{\"user\":\"bob\",\"views\":1}");
            assertThat(driver.state("sessions", "session", Map.of("user", "alice"))).isEmpty();
        }
    }
}
