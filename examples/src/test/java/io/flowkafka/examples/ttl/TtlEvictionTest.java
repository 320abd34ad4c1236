package io.flowkafka.examples.ttl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import io.flowkafka.testing.KeyVisitorCoverage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TtlPipeline} on {@link FlowTestDriver}, with the visitor's period in seconds: the driver's
 * wall clock moves only when a test advances it, in steps of {@link #STEP} so that the visitor's
 * punctuator sees time pass evenly. Pass 0 starts at the visitor's first step, one step after the
 * driver starts; passes follow each other back to back.
 */
class TtlEvictionTest {
    private static final String EVENTS = "user-spend";
    private static final String TOTALS = "daily-totals";
    private static final Duration STEP = Duration.ofMillis(100);
    private static final long HOUR_MS = 3_600_000L;
    private static final long DAY_MS = 24 * HOUR_MS;
    private static final ObjectMapper JSON = new ObjectMapper();

    private FlowTestDriver driver;
    /** Every daily_totals record read so far, in write order. */
    private final List<JsonNode> totals = new ArrayList<>();

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no message or visit failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    private void start(String ttl, String period) {
        driver = FlowTestDriver.create(TtlPipeline.spec("ttl-example", EVENTS, TOTALS, ttl, period, 4));
    }

    private long nowMs() {
        return driver.wallClockTime().toEpochMilli();
    }

    private void event(String user, long amount, long tsMs) {
        driver.pipeSource(EVENTS, user, "{\"user\":\"" + user + "\",\"amount\":" + amount + ",\"ts\":" + tsMs + "}");
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, STEP);
    }

    private Optional<GenericRecord> state(String name, String user) {
        return driver.stateForPayload(TtlPipeline.COMPUTATION, name, "events",
                Map.of("user", user, "amount", 0L, "ts", 0L));
    }

    private Optional<Long> lastSeen(String user) {
        return state("last_seen", user).map(s -> (Long) s.get("ts"));
    }

    /** The pass the visitor is in: every pass below it is complete. */
    private long currentPass() {
        return driver.keyVisitorCoverage(TtlPipeline.COMPUTATION, TtlPipeline.VISITOR).map(KeyVisitorCoverage::pass)
                .orElse(-1L);
    }

    private List<JsonNode> totals() {
        for (String json : driver.readSinkJson(TOTALS)) {
            try {
                totals.add(JSON.readTree(json));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return totals;
    }

    /** The daily_totals of one pass by user, checking that no user got two in the pass. */
    private Map<String, JsonNode> totalsInPass(long pass) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode t : totals()) {
            if (t.get("pass").asLong() == pass) {
                String user = t.get("user").asText();
                assertThat(out.put(user, t)).as("a second daily total for %s in pass %d: %s", user, pass, t).isNull();
            }
        }
        return out;
    }

    private static List<String> users(String prefix, int n) {
        return IntStream.range(0, n).mapToObj(i -> prefix + i).toList();
    }

    @Test
    void shouldDeleteKeysIdleLongerThanTheTtlAndEmitTheOthersOnceAPass() {
        start("7d", "2s");
        long now = nowMs();
        List<String> stale = users("stale-", 10);
        List<String> fresh = users("fresh-", 10);
        stale.forEach(u -> event(u, 5, now - 8 * DAY_MS));
        for (String u : fresh) {
            event(u, 3, now - HOUR_MS);
            event(u, 4, now - DAY_MS); // out of order: last_seen stays at the latest event time
        }
        assertThat(stale).as("state exists until the visitor comes").allSatisfy(u -> assertThat(lastSeen(u)).isPresent());

        advance(Duration.ofMillis(2_300));

        assertThat(currentPass()).as("pass 0 is complete").isEqualTo(1L);
        for (String u : stale) {
            assertThat(state("last_seen", u)).as("last_seen of %s", u).isEmpty();
            assertThat(state("daily", u)).as("daily of %s", u).isEmpty();
        }
        for (String u : fresh) {
            assertThat(lastSeen(u)).as("last_seen of %s", u).contains(now - HOUR_MS);
            assertThat(state("daily", u)).as("daily of %s is reset once emitted", u).isEmpty();
        }
        Map<String, JsonNode> pass0 = totalsInPass(0);
        assertThat(pass0.keySet()).containsExactlyInAnyOrderElementsOf(fresh);
        assertThat(pass0.values()).allSatisfy(t -> {
            assertThat(t.get("count").asLong()).isEqualTo(2);
            assertThat(t.get("sum").asLong()).isEqualTo(7);
            assertThat(t.get("visit_ts").asLong()).isBetween(now, nowMs());
        });

        advance(Duration.ofSeconds(2));
        assertThat(currentPass()).isEqualTo(2L);
        Map<String, JsonNode> pass1 = totalsInPass(1);
        assertThat(pass1.keySet()).as("live keys are reported every pass, deleted ones never again")
                .containsExactlyInAnyOrderElementsOf(fresh);
        assertThat(pass1.values()).as("no events since pass 0").allSatisfy(t -> {
            assertThat(t.get("count").asLong()).isZero();
            assertThat(t.get("sum").asLong()).isZero();
        });
        assertThat(totals()).extracting(t -> t.get("user").asText()).as("a deleted key is never reported")
                .doesNotContainAnyElementsOf(stale);
    }

    @Test
    void shouldEmitExactlyOneTotalPerKeyAndPassWithEveryEventCountedOnce() {
        start("7d", "2s");
        long now = nowMs();
        List<String> users = users("u", 20);
        Map<String, long[]> batch1 = new LinkedHashMap<>(); // user -> {count, sum}
        for (int j = 0; j < users.size(); j++) {
            for (int i = 0; i <= j % 3; i++) {
                long amount = (j + 1) * 10L + i;
                event(users.get(j), amount, now - HOUR_MS + i);
                batch1.merge(users.get(j), new long[] {1, amount}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
            }
        }
        advance(Duration.ofMillis(2_300));
        assertThat(currentPass()).isEqualTo(1L);
        Map<String, JsonNode> pass0 = totalsInPass(0);
        assertThat(pass0.keySet()).containsExactlyInAnyOrderElementsOf(users);
        for (String u : users) {
            assertThat(pass0.get(u).get("count").asLong()).as("count of %s", u).isEqualTo(batch1.get(u)[0]);
            assertThat(pass0.get(u).get("sum").asLong()).as("sum of %s", u).isEqualTo(batch1.get(u)[1]);
        }

        // a second batch while pass 1 runs: each event lands in pass 1 or in pass 2, depending on the key's turn
        for (int j = 0; j < users.size(); j++) {
            event(users.get(j), 1000L + j, nowMs());
            event(users.get(j), 1000L + j, nowMs());
        }
        advance(Duration.ofMillis(4_000));
        assertThat(currentPass()).isEqualTo(3L);
        Map<String, JsonNode> pass1 = totalsInPass(1);
        Map<String, JsonNode> pass2 = totalsInPass(2);
        assertThat(pass1.keySet()).containsExactlyInAnyOrderElementsOf(users);
        assertThat(pass2.keySet()).containsExactlyInAnyOrderElementsOf(users);
        for (int j = 0; j < users.size(); j++) {
            String u = users.get(j);
            assertThat(pass1.get(u).get("count").asLong() + pass2.get(u).get("count").asLong()).as("count of %s", u)
                    .isEqualTo(2);
            assertThat(pass1.get(u).get("sum").asLong() + pass2.get(u).get("sum").asLong()).as("sum of %s", u)
                    .isEqualTo(2 * (1000L + j));
            assertThat(pass1.get(u).get("count").asLong()).as("a key's events since its last visit go out together")
                    .isIn(0L, 2L);
        }
        assertThat(totals()).filteredOn(t -> t.get("pass").asLong() < 3).hasSize(60);
    }

    @Test
    void shouldNotEvictAKeyRefreshedBeforeItsTurn() {
        start("7d", "4s");
        long now = nowMs();
        List<String> users = users("idle-", 40);
        users.forEach(u -> event(u, 1, now - 8 * DAY_MS));

        advance(Duration.ofSeconds(2)); // about half of pass 0
        List<String> evicted = users.stream().filter(u -> lastSeen(u).isEmpty()).toList();
        List<String> notYet = users.stream().filter(u -> lastSeen(u).isPresent()).toList();
        assertThat(evicted).as("the scan is under way").isNotEmpty();
        assertThat(notYet).as("the scan is not done").hasSizeGreaterThanOrEqualTo(5);
        List<String> refreshed = notYet.subList(0, 5);
        long refreshTs = nowMs();
        refreshed.forEach(u -> event(u, 100, refreshTs));
        String comeback = evicted.get(0); // evicted earlier in this pass, then seen again
        event(comeback, 50, refreshTs);

        advance(Duration.ofMillis(2_300));
        assertThat(currentPass()).isEqualTo(1L);
        for (String u : users) {
            if (refreshed.contains(u) || u.equals(comeback)) {
                assertThat(lastSeen(u)).as("last_seen of %s", u).contains(refreshTs);
            } else {
                assertThat(lastSeen(u)).as("last_seen of %s", u).isEmpty();
                assertThat(state("daily", u)).as("daily of %s", u).isEmpty();
            }
        }
        Map<String, JsonNode> pass0 = totalsInPass(0);
        assertThat(pass0.keySet()).as("only the refreshed keys are reported; the comeback key is behind the scan")
                .containsExactlyInAnyOrderElementsOf(refreshed);
        assertThat(pass0.values()).as("the stale event and the fresh one").allSatisfy(t -> {
            assertThat(t.get("count").asLong()).isEqualTo(2);
            assertThat(t.get("sum").asLong()).isEqualTo(101);
        });

        advance(Duration.ofSeconds(4));
        assertThat(currentPass()).isEqualTo(2L);
        Map<String, JsonNode> pass1 = totalsInPass(1);
        assertThat(pass1.keySet()).containsExactlyInAnyOrderElementsOf(
                java.util.stream.Stream.concat(refreshed.stream(), java.util.stream.Stream.of(comeback)).toList());
        // a deleted key starts from scratch: its stale event (amount 1) went with it
        assertThat(pass1.get(comeback).get("count").asLong()).isEqualTo(1);
        assertThat(pass1.get(comeback).get("sum").asLong()).isEqualTo(50);
        assertThat(refreshed).allSatisfy(u -> assertThat(pass1.get(u).get("count").asLong()).isZero());
    }

    @Test
    void shouldReadTheTtlFromTheParameterAndEvictAKeyOnceItsLastEventIsOlderThanIt() {
        start("1h", "2s");
        long now = nowMs();
        long insideTs = now - HOUR_MS + 60_000; // expires 1 min from now
        event("inside", 1, insideTs);
        event("outside", 1, now - HOUR_MS - 60_000);

        advance(Duration.ofMillis(2_300));
        assertThat(lastSeen("outside")).isEmpty();
        assertThat(lastSeen("inside")).contains(insideTs);
        assertThat(totalsInPass(0).keySet()).containsExactly("inside");

        driver.advanceWallClockTime(Duration.ofMinutes(2), Duration.ofMillis(500));
        assertThat(lastSeen("inside")).as("expired within the two minutes").isEmpty();
        assertThat(state("daily", "inside")).isEmpty();
        List<JsonNode> reports = totals();
        assertThat(reports).extracting(t -> t.get("user").asText()).containsOnly("inside");
        assertThat(reports).extracting(t -> t.get("pass").asLong()).as("one report a pass until it expired")
                .containsExactlyElementsOf(IntStream.range(0, reports.size()).mapToObj(i -> (long) i).toList());
        assertThat(reports).extracting(t -> t.get("visit_ts").asLong()).as("reported only while within the TTL")
                .allSatisfy(ts -> assertThat(ts - insideTs).isLessThanOrEqualTo(HOUR_MS));
        long lastReport = reports.get(reports.size() - 1).get("visit_ts").asLong();
        assertThat(lastReport).as("deleted at the first visit after it expired, a period or so later")
                .isGreaterThan(insideTs + HOUR_MS - 3_000);
        assertThat(reports.subList(1, reports.size())).extracting(t -> t.get("count").asLong()).containsOnly(0L);
        assertThat(reports.size()).as("a pass every 2 to 2.5 s over the 61 s the key lived").isBetween(24, 31);
    }

    @Test
    void shouldUseADayPeriodAndASevenDayTtlByDefaultAndRejectABadTtl() {
        PipelineSpec spec = TtlPipeline.spec("ttl-example", EVENTS, TOTALS, 4);
        ComputationSpec ttl = spec.computations().get(TtlPipeline.COMPUTATION);
        assertThat(ttl.parameters()).containsEntry(TtlPipeline.TTL_PARAMETER, "7d");
        assertThat(ttl.keyVisitorStreams().get(TtlPipeline.VISITOR).settings().period()).isEqualTo(Duration.ofDays(1));
        assertThat(ttl.streamsDependency()).containsEntry(TtlPipeline.DAILY_TOTALS, List.of(TtlPipeline.VISITOR));

        assertThat(TtlEviction.parseDuration("7d", "ttl")).isEqualTo(Duration.ofDays(7));
        assertThat(TtlEviction.parseDuration("1.5h", "ttl")).isEqualTo(Duration.ofMinutes(90));
        assertThat(TtlEviction.parseDuration(" 90s ", "ttl")).isEqualTo(Duration.ofSeconds(90));
        assertThat(TtlEviction.parseDuration(250, "ttl")).isEqualTo(Duration.ofMillis(250));
        assertThat(TtlEviction.parseDuration("250", "ttl")).isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> TtlPipeline.spec("ttl-example", EVENTS, TOTALS, "a week", "1d", 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parameter 'ttl'")
                .hasMessageContaining("'a week'");
        assertThatThrownBy(() -> TtlEviction.parseDuration("0s", "ttl")).hasMessageContaining("positive");
        assertThatThrownBy(() -> TtlEviction.parseDuration(null, "ttl")).hasMessageContaining("missing");
    }
}
