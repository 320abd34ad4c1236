package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.ComputationHarness;
import io.flowkafka.testing.HarnessResult;
import io.flowkafka.testing.HarnessTimer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The wait-click join's process function on {@link ComputationHarness}: the behaviour
 * {@link WaitClickJoinTest} checks on the whole pipeline, here call by call, with the event
 * watermark set by the test.
 */
class WaitClickJoinHarnessTest {
    private static final long MS = 1_000_000L;
    private static final long MIN = 60_000L;
    private static final long WAIT_NANOS = WaitClickJoin.WAIT.toNanos();
    private final Map<String, String> results = new TreeMap<>();
    private ComputationHarness join;

    @BeforeEach
    void start() {
        join = ComputationHarness.create(WaitClickJoin.spec("wcj", "impressions", "clicks", "results", 4, false), "join");
    }

    @AfterEach
    void stop() {
        join.close();
    }

    private HarnessResult impression(String id, long tsMs) {
        return record(join.message("impressions", Map.of("impression_id", id, "user", "u-" + id, "ts", tsMs), tsMs * MS));
    }

    private HarnessResult click(String id, long tsMs) {
        return record(join.message("clicks", Map.of("impression_id", id, "ts", tsMs), tsMs * MS));
    }

    /** Moves the event watermark of the timer stream to {@code tsMs}; fired timers' results are recorded. */
    private void watermarkTo(long tsMs) {
        join.advanceWatermark("timeout", tsMs * MS).forEach(this::record);
    }

    private HarnessResult record(HarnessResult r) {
        for (HarnessResult.Output o : r.outputs("results")) {
            String id = o.get("impression_id").toString();
            assertThat(results.put(id, o.get("result").toString())).as("one result for %s", id).isNull();
        }
        return r;
    }

    private GenericRecord key(String id) {
        return join.keyOf("impressions", Map.of("impression_id", id));
    }

    @Test
    void shouldJoinAClickWithinThirtyMinutesAndTimeOutTheOthers() {
        HarnessResult i1 = impression("i1", 0);
        assertThat(i1.outputs()).isEmpty();
        assertThat(i1.timers()).containsExactly(HarnessTimer.of("timeout", key("i1"), WAIT_NANOS, 0L));
        assertThat(i1.stateChange("join")).hasValueSatisfying(c -> {
            assertThat(c.record().get("impression_ts")).isEqualTo(0L);
            assertThat(c.record().get("joined")).isEqualTo(false);
        });
        impression("i2", 0);

        HarnessResult c1 = click("i1", 10 * MIN);
        assertThat(c1.outputs("results")).singleElement().satisfies(o -> {
            assertThat(o.get("user")).isEqualTo("u-i1");
            assertThat(o.get("click_ts")).isEqualTo(10 * MIN);
            assertThat(o.eventTimestamp()).as("the click's event time").isEqualTo(10 * MIN * MS);
        });
        assertThat(results).containsExactly(Map.entry("i1", "joined"));

        watermarkTo(30 * MIN);
        assertThat(results).as("a watermark equal to the trigger fires nothing: i2 still waits").hasSize(1);
        assertThat(join.pendingTimers()).hasSize(2);

        watermarkTo(30 * MIN + 1);
        assertThat(results).containsExactly(Map.entry("i1", "joined"), Map.entry("i2", "no_click"));
        assertThat(join.pendingTimers()).isEmpty();
        assertThat(join.keys()).as("both waits are over: no state left").isEmpty();
    }

    @Test
    void shouldJoinAClickProcessedBeforeItsImpression() {
        HarnessResult early = click("i3", 5 * MIN);
        assertThat(early.outputs()).isEmpty();
        assertThat(early.timers()).extracting(HarnessTimer::getTriggerTimestamp).containsExactly(5 * MIN * MS + WAIT_NANOS);
        impression("i3", 4 * MIN);
        assertThat(results).containsExactly(Map.entry("i3", "joined"));
        watermarkTo(60 * MIN);
        assertThat(results).as("exactly one result").hasSize(1);
        assertThat(join.state("join", key("i3"))).isEmpty();
    }

    @Test
    void shouldIgnoreClicksAfterTheWaitAndDuplicates() {
        impression("i4", 0);
        assertThat(click("i4", 31 * MIN).outputs()).isEmpty();
        impression("i5", 0);
        click("i5", MIN);
        assertThat(click("i5", 2 * MIN).outputs()).as("a second click").isEmpty();
        assertThat(impression("i5", 0).isEmpty()).as("a duplicate impression changes nothing").isTrue();
        watermarkTo(40 * MIN);
        assertThat(results).containsExactly(Map.entry("i4", "no_click"), Map.entry("i5", "joined"));
    }

    @Test
    void shouldForgetAnOrphanClickAfterTheWait() {
        click("orphan", 0);
        assertThat(join.state("join", key("orphan"))).isPresent();
        watermarkTo(30 * MIN + 1);
        assertThat(results).isEmpty();
        assertThat(join.state("join", key("orphan"))).isEmpty();
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
        // in event-time order, the watermark 1 min behind (the pipeline's out-of-orderness bound)
        int c = 0;
        for (int i = 0; i < 300; i++) {
            long ts = impressions.get("i" + i);
            while (c < clicks.size() && clicks.get(c)[1] <= ts) {
                watermarkTo(clicks.get(c)[1] - MIN);
                click("i" + clicks.get(c)[0], clicks.get(c)[1]);
                c++;
            }
            watermarkTo(ts - MIN);
            impression("i" + i, ts);
        }
        for (; c < clicks.size(); c++) {
            watermarkTo(clicks.get(c)[1] - MIN);
            click("i" + clicks.get(c)[0], clicks.get(c)[1]);
        }
        watermarkTo(300 * 10_000L + 31 * MIN);
        Map<String, String> expected = new TreeMap<>();
        impressions.forEach((id, ts) -> expected.put(id, "no_click"));
        for (long[] k : clicks) {
            String id = "i" + k[0];
            if (WaitClickJoin.clickCounts(impressions.get(id), k[1])) {
                expected.put(id, "joined");
            }
        }
        assertThat(results).isEqualTo(expected);
        assertThat(join.failures()).isEmpty();
        watermarkTo(300 * 10_000L + 80 * MIN); // late clicks waited as orphans: their waits end too
        assertThat(results).isEqualTo(expected);
        assertThat(join.keys()).isEmpty();
    }

    @Test
    void shouldForwardSourceMessagesInAComputationWithoutAFunction() {
        PipelineSpec spec = WaitClickJoin.spec("wcj", "impressions", "clicks", "results", 4, false);
        try (ComputationHarness read = ComputationHarness.create(spec, "read_impressions")) {
            HarnessResult r = read.message("raw_impressions", Map.of("impression_id", "i1", "user", "u", "ts", 5L), 5 * MS);
            assertThat(r.outputs()).singleElement().satisfies(o -> {
                assertThat(o.streamId()).isEqualTo("impressions");
                assertThat(o.get("impression_id")).isEqualTo("i1");
            });
        }
    }

    /** The example of {@link ComputationHarness}'s Javadoc, verbatim. */
    @Test
    void javadocExample() {
        // tag::example[]
        PipelineSpec spec = WaitClickJoin.spec("wcj", "impressions", "clicks", "results", 4, false);
        try (ComputationHarness join = ComputationHarness.create(spec, "join")) {
            join.message("impressions", Map.of("impression_id", "i1", "user", "u1", "ts", 0L), 0L);
            HarnessResult click = join.message("clicks", Map.of("impression_id", "i1", "ts", 60_000L), 60_000 * MS);
            assertThat(click.outputs("results")).singleElement()
                    .satisfies(out -> assertThat(out.get("result")).isEqualTo("joined"));

            HarnessResult impression = join.message("impressions",
                    Map.of("impression_id", "i2", "user", "u2", "ts", 0L), 0L);
            assertThat(impression.timers()).containsExactly(HarnessTimer.of("timeout", impression.key(), 30 * MIN * MS, 0L));
            List<HarnessResult> fired = join.advanceWatermark(30 * MIN * MS + 1);
            assertThat(fired).flatMap(r -> r.outputs("results")).extracting(o -> o.get("impression_id"), o -> o.get("result"))
                    .containsExactly(tuple("i2", "no_click"));
            assertThat(join.state("join", impression.key())).isEmpty();
        }
        // end::example[]
    }
}
