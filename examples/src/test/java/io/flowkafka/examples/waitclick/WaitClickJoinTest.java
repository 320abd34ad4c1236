package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.FlowTestDriver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The wait-click join on {@link FlowTestDriver}. */
class WaitClickJoinTest {
    private static final long MIN = 60_000L;
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
    protected FlowTestDriver driver;

    /** The spec under test: the two-hop pipeline of the example. */
    protected io.flowkafka.spec.PipelineSpec spec() {
        return WaitClickJoin.spec("wcj", "impressions", "clicks", "results", 4, false);
    }

    /** Deployment properties of the driver (FlowTestDriver's defaults: in-memory stores). */
    protected java.util.Properties props() {
        return new java.util.Properties();
    }

    @BeforeEach
    void start() {
        driver = FlowTestDriver.create(spec(), props());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    protected void impression(String id, long tsMs) {
        driver.pipeSource("impressions", id, "{\"impression_id\":\"" + id + "\",\"user\":\"u-" + id + "\",\"ts\":" + tsMs + "}");
        driver.advanceWallClockTime(Duration.ofMillis(200));
    }

    private void click(String id, long tsMs) {
        driver.pipeSource("clicks", id, "{\"impression_id\":\"" + id + "\",\"ts\":" + tsMs + "}");
        driver.advanceWallClockTime(Duration.ofMillis(200));
    }

    /** Moves both inputs' event watermarks to at least {@code tsMs} (the default out-of-orderness bound is 1 min). */
    protected void watermarksTo(long tsMs) {
        impression("tick", tsMs + MIN + 1);
        click("tick", tsMs + MIN + 1);
    }

    protected Map<String, String> results() {
        Map<String, String> out = new TreeMap<>();
        for (String json : driver.readSinkJson("results")) {
            com.fasterxml.jackson.databind.JsonNode r;
            try {
                r = JSON.readTree(json);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            String id = r.get("impression_id").asText();
            if (!id.equals("tick")) {
                assertThat(out.put(id, r.get("result").asText())).as("one result for %s", id).isNull();
            }
        }
        return out;
    }

    @Test
    void shouldJoinAClickWithinThirtyMinutesAndTimeOutTheOthers() {
        impression("i1", 0);
        impression("i2", 0);
        click("i1", 10 * MIN);
        assertThat(results()).containsExactly(Map.entry("i1", "joined"));
        watermarksTo(29 * MIN);
        assertThat(results()).as("i2 still waits").isEmpty();
        watermarksTo(30 * MIN + 1);
        assertThat(results()).containsExactly(Map.entry("i2", "no_click"));
    }

    @Test
    void shouldJoinAClickProcessedBeforeItsImpression() {
        click("i3", 5 * MIN);
        impression("i3", 4 * MIN);
        assertThat(results()).containsExactly(Map.entry("i3", "joined"));
        watermarksTo(60 * MIN);
        assertThat(results()).as("exactly one result").isEmpty();
    }

    @Test
    void shouldIgnoreClicksAfterTheWaitAndDuplicates() {
        impression("i4", 0);
        click("i4", 31 * MIN);
        impression("i5", 0);
        click("i5", MIN);
        click("i5", 2 * MIN);
        watermarksTo(40 * MIN);
        assertThat(results()).containsExactly(Map.entry("i4", "no_click"), Map.entry("i5", "joined"));
    }

    @Test
    void shouldMatchTheReferenceOnRandomTraffic() {
        Random random = new Random(7);
        Map<String, Long> impressions = new HashMap<>();
        List<long[]> clicks = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            long ts = i * 10_000L;
            impressions.put("i" + i, ts);
            if (random.nextDouble() < 0.7) {
                clicks.add(new long[] {i, ts + (long) (random.nextDouble() * 40 * MIN)});
            }
        }
        clicks.sort((x, y) -> Long.compare(x[1], y[1]));
        // interleave impressions and clicks in event-time order, as two ordered sources would deliver them
        int c = 0;
        for (int i = 0; i < 300; i++) {
            long ts = impressions.get("i" + i);
            while (c < clicks.size() && clicks.get(c)[1] <= ts) {
                click("i" + clicks.get(c)[0], clicks.get(c)[1]);
                c++;
            }
            impression("i" + i, ts);
        }
        for (; c < clicks.size(); c++) {
            click("i" + clicks.get(c)[0], clicks.get(c)[1]);
        }
        watermarksTo(300 * 10_000L + 31 * MIN);
        Map<String, String> expected = new TreeMap<>();
        impressions.forEach((id, ts) -> expected.put(id, "no_click"));
        for (long[] k : clicks) {
            String id = "i" + k[0];
            if (WaitClickJoin.clickCounts(impressions.get(id), k[1])) {
                expected.put(id, "joined");
            }
        }
        assertThat(results()).isEqualTo(expected);
    }
}
