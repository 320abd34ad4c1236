package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * More rules of the timers pages (reference 003 and 004) on {@link FlowTestDriver}, beside
 * {@link TimerSemanticsTest}: which timer streams form a group, {@code system_time} timers, what
 * holds completion, and firing a backlog in bounded steps. Two finite sources feed streams {@code a}
 * and {@code b}; computation {@code timers} ({@link TimerSemanticsTest.Timers}) registers timers as its
 * input messages say and reports each fired timer on {@code fired}. Its timer streams:
 * <ul>
 *   <li>{@code e_a} (event time, waits on a) and {@code e_a_delay} (event time, a delayed by 5 s):
 *       one group, as different delays do not split a group; only {@code e_a_delay} writes to
 *       {@code audit_delay};</li>
 *   <li>{@code e_b} (event time, waits on b): a group of its own; it alone writes to {@code audit_b};</li>
 *   <li>{@code s_a} (system time, waits on a): a group of its own, another time type; it alone writes
 *       to {@code audit_sys};</li>
 *   <li>{@code wall} (real time): the real-time group.</li>
 * </ul>
 */
class TimerGroupsAndClocksTest {
    private static final long MS = 1_000_000L;

    private FlowTestDriver driver;

    private void start(Properties props) {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        PipelineSpec spec = PipelineSpec.builder("groups")
                .stream("raw_a", TimerSemanticsTest.EVENT).stream("raw_b", TimerSemanticsTest.EVENT)
                .stream("a", TimerSemanticsTest.EVENT).stream("b", TimerSemanticsTest.EVENT)
                .stream("fired", TimerSemanticsTest.FIRED).stream("audit_delay", TimerSemanticsTest.FIRED)
                .stream("audit_b", TimerSemanticsTest.FIRED).stream("audit_sys", TimerSemanticsTest.FIRED)
                .computation("read_a", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw_a", "KafkaSource", Map.of("topics", "in-a", "finite", true)).outputStreamIds("a"))
                .computation("read_b", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw_b", "KafkaSource", Map.of("topics", "in-b", "finite", true)).outputStreamIds("b"))
                .computation("timers", c -> c.inputStreamIds("a", "b")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(TimerSemanticsTest.Timers::new)
                        .outputStreamIds("fired", "audit_delay", "audit_b", "audit_sys")
                        .timer("e_a", Map.of("streams", List.of("a")))
                        .timer("e_a_delay", Map.of("streams_with_delays", Map.of("a", "5s")))
                        .timer("e_b", Map.of("streams", List.of("b")))
                        .timer("s_a", Map.of("time_type", "system_time", "streams", List.of("a")))
                        .timer("wall", Map.of("time_type", "real_time"))
                        .streamsDependency("audit_delay", List.of("e_a_delay"))
                        .streamsDependency("audit_b", List.of("e_b"))
                        .streamsDependency("audit_sys", List.of("s_a")))
                .build();
        driver = FlowTestDriver.create(spec, props);
    }

    private void start() {
        start(new Properties());
    }

    @AfterEach
    void stop() {
        if (driver != null) {
            driver.close();
        }
    }

    private void event(String source, String key, long tsMs, String cmd) {
        TimerSemanticsTest.event(driver, source, key, tsMs, cmd);
    }

    private List<String> fired() {
        return driver.readPayloads("fired").stream().map(r -> r.get("stream") + ":" + r.get("key")).toList();
    }

    /** One event-time timer due on each of a and b. */
    private void twoDueEventTimers() {
        event("a", "ka", 100, "add e_a 500 100");
        event("b", "kb", 100, "add e_b 500 100");
        event("a", "x", 600, null);
        event("b", "y", 600, null);
    }

    @Test
    void shouldHoldOnlyTheBlockedEventTimeGroupAndLetAnotherGoOn() {
        // 004: "handing out ready timers pauses for that stream's whole group ... other groups go on"; e_a and e_b
        // wait on streams that do not overlap: two groups
        start();
        driver.blockOutputStream("audit_b", true);
        twoDueEventTimers();
        assertThat(fired()).as("e_b's group is held, e_a's goes on").containsExactly("e_a:ka");
        driver.blockOutputStream("audit_b", false);
        driver.advanceWallClockTime(Duration.ofMillis(100));
        assertThat(fired()).containsExactly("e_b:kb");
    }

    @Test
    void shouldKeepStreamsWithDifferentDelaysInOneGroup() {
        // 004: streams of one time type whose watched streams overlap are one group, whatever their delays: blocking
        // e_a_delay's output holds e_a, which writes nowhere near it
        start();
        driver.blockOutputStream("audit_delay", true);
        twoDueEventTimers();
        assertThat(fired()).as("e_a is held with e_a_delay; e_b goes on").containsExactly("e_b:kb");
        driver.blockOutputStream("audit_delay", false);
        driver.advanceWallClockTime(Duration.ofMillis(100));
        assertThat(fired()).containsExactly("e_a:ka");
    }

    @Test
    void shouldKeepSystemTimeAndEventTimeStreamsInDifferentGroups() {
        // 004: a group is one time type: blocking s_a (system time, waits on a) does not hold e_a (event time, a)
        start();
        long now = driver.wallClockTime().toEpochMilli();
        driver.blockOutputStream("audit_sys", true);
        event("a", "ks", 100, "add s_a " + (now + 500) + " 100");
        twoDueEventTimers();
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        assertThat(fired()).as("s_a is due by the clock but held; both event-time groups go on")
                .containsExactlyInAnyOrder("e_a:ka", "e_b:kb");
        driver.blockOutputStream("audit_sys", false);
        driver.advanceWallClockTime(Duration.ofMillis(100));
        assertThat(fired()).containsExactly("s_a:ks");
    }

    @Test
    void shouldFireSystemTimeTimersFromTheSystemWatermark() {
        // 003: "system_time — compared with SystemWatermark"; a caught-up source partition's system watermark
        // follows the clock, while its event watermark stays where its records left it
        start();
        long now = driver.wallClockTime().toEpochMilli();
        event("a", "ks", 100, "add s_a " + (now + 5_000) + " 100");
        event("a", "ke", 100, "add e_a " + (now + 5_000) + " 100");
        driver.advanceWallClockTime(Duration.ofSeconds(4));
        assertThat(fired()).as("the clock has not passed the trigger yet").isEmpty();
        driver.advanceWallClockTime(Duration.ofSeconds(2));
        assertThat(fired()).as("the system watermark passed it; the event watermark of a is still at 100 ms")
                .containsExactly("s_a:ks");
    }

    @Test
    void shouldCompleteWithARealTimeTimerPendingButNotWithAnEventOrSystemTimeOne() {
        // issue 3: "a computation completes once its inputs completed and its event-time and system-time timers
        // fired (real_time timers do not hold completion)"
        start();
        long now = driver.wallClockTime().toEpochMilli();
        long hour = Duration.ofHours(1).toMillis();
        event("a", "ke", 100, "add e_a " + hour + " 100");
        event("a", "ks", 100, "add s_a " + (now + hour) + " 100");
        event("a", "kw", 100, "add wall " + (now + hour) + " 100");
        assertThat(fired()).isEmpty();
        driver.completeSource("in-a");
        driver.completeSource("in-b");
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        assertThat(fired()).as("completed inputs fire the event- and system-time timers, not the real-time one")
                .containsExactlyInAnyOrder("e_a:ke", "s_a:ks");
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        assertThat(driver.completedComputations()).containsExactlyInAnyOrder("read_a", "read_b", "timers");
        assertThat(driver.pendingTimers("timers")).singleElement()
                .satisfies(t -> assertThat(t.getStreamId()).isEqualTo("wall"));
        driver.advanceWallClockTime(Duration.ofHours(1));
        assertThat(fired()).as("the real-time timer still fires on the clock").containsExactly("wall:kw");
    }

    @Test
    void shouldFireABacklogInStepsOfAtMostTheConfiguredNumberOfTimers() {
        // issue 3: "firing proceeds in bounded steps (the stream thread keeps polling and committing ...)"
        Properties props = new Properties();
        props.put("flow.timers.max.per.punctuation", "2");
        start(props);
        for (int i = 0; i < 7; i++) {
            event("a", "k" + i, 100, "add e_a " + (1_000 + i) + " 100");
        }
        event("a", "x", 2_000, null);
        driver.advanceWallClockTime(Duration.ofSeconds(1), Duration.ofMillis(10));
        assertThat(fired()).as("all of them, in trigger order")
                .containsExactly("e_a:k0", "e_a:k1", "e_a:k2", "e_a:k3", "e_a:k4", "e_a:k5", "e_a:k6");
        var steps = driver.meterRegistry().get("flow.timers.punctuation").tag("computation", "timers").timer();
        assertThat(steps.count()).as("steps that fired timers, at most 2 each").isGreaterThanOrEqualTo(4);
        assertThat(driver.meterRegistry().get("flow.timers.fired").tag("computation", "timers").counter().count())
                .isEqualTo(7.0);
    }
}
