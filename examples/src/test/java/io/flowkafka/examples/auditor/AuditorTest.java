package io.flowkafka.examples.auditor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link AuditorPipeline} on {@link FlowTestDriver}: a computation with only a visit stream (reference 000,
 * "Computation with only a visit stream") scanning the sessions table through its joiner, with a period of 10 s.
 */
class AuditorTest {
    private static final String LOGINS = "logins";
    private static final String IDLE = "idle-users";
    private static final ObjectMapper JSON = new ObjectMapper();
    private FlowTestDriver driver;

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no call failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    private void start(boolean finite) {
        driver = FlowTestDriver.create(AuditorPipeline.spec("audit-example", LOGINS, IDLE, "1h", "10s", 4, finite));
    }

    private void login(String user, Duration ago) {
        long ts = driver.wallClockTime().minus(ago).toEpochMilli();
        driver.pipeSource(LOGINS, user, "{\"user\":\"" + user + "\",\"ts\":" + ts + "}");
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, Duration.ofMillis(100));
    }

    private List<JsonNode> idle() {
        List<JsonNode> out = new ArrayList<>();
        for (String s : driver.readSinkJson(IDLE)) {
            try {
                out.add(JSON.readTree(s));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    private static List<String> users(List<JsonNode> records, long pass) {
        return records.stream().filter(r -> r.get("pass").asLong() == pass).map(r -> r.get("user").asText()).toList();
    }

    @Test
    void shouldAuditTheTableEveryPassForThePipelinesLifetimeWithFiniteFalse() {
        // "Set finite=%false [...] for a periodic scanner that must run throughout the pipeline lifetime, especially a
        // computation with no input or source streams."
        start(false);
        login("ann", Duration.ofHours(3));
        login("bob", Duration.ofMinutes(5));
        login("cid", Duration.ofHours(2));
        assertThat(driver.externalTable("track", AuditorPipeline.SESSIONS).get(Map.of("user", "ann"))).isPresent();
        advance(Duration.ofSeconds(11));
        List<JsonNode> pass0 = idle();
        assertThat(users(pass0, 0)).containsExactlyInAnyOrder("ann", "cid");
        assertThat(pass0.get(0).get("idle_ms").asLong()).isGreaterThanOrEqualTo(Duration.ofHours(2).toMillis());
        login("cid", Duration.ZERO); // cid is back: the next pass sees the table's new row
        advance(Duration.ofSeconds(10));
        assertThat(users(idle(), 1)).containsExactly("ann");
        advance(Duration.ofSeconds(30));
        assertThat(users(idle(), 4)).as("still auditing, pass after pass").containsExactly("ann");
        assertThat(driver.completedComputations()).doesNotContain(AuditorPipeline.AUDITOR);
    }

    @Test
    void shouldCompleteAfterOneFullPassWithFiniteTrue() {
        // "With default %true, there are no inputs to wait for, so its first pass is final and the partitions
        // complete after one full scan."
        start(true);
        login("ann", Duration.ofHours(3));
        advance(Duration.ofSeconds(11));
        assertThat(users(idle(), 0)).containsExactly("ann");
        advance(Duration.ofSeconds(1));
        assertThat(driver.completedComputations()).contains(AuditorPipeline.AUDITOR);
        advance(Duration.ofSeconds(20));
        assertThat(idle()).as("no pass after the final one").isEmpty();
    }
}
