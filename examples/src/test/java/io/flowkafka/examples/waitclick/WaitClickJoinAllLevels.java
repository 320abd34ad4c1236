package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestLevel;
import io.flowkafka.testing.FlowTestLevels;
import io.flowkafka.testing.PipelineUnderTest;
import io.flowkafka.testing.TestNames;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;

/**
 * The wait-click join tested once, run on every level: on the unit harness (computation
 * {@code join} alone), on {@code FlowTestDriver} and on the in-JVM broker. Impressions and clicks
 * are piped into the join's input streams {@code impressions} and {@code clicks} as their Source
 * computations would write them, and the event watermark of both is moved explicitly.
 *
 * <p>{@link WaitClickJoinAllLevelsTest} runs the harness and driver levels (surefire, milliseconds),
 * {@link WaitClickJoinAllLevelsIT} the broker level (failsafe, seconds). The same scenario written
 * once per level: {@link WaitClickJoinHarnessTest}, {@link WaitClickJoinTest}, {@link WaitClickJoinIT}.
 */
abstract class WaitClickJoinAllLevels {
    private static final long MS = 1_000_000L;
    private static final long MIN = 60_000L;

    private static Map<String, Object> impression(String id, long tsMs) {
        return Map.of("impression_id", id, "user", "u-" + id, "ts", tsMs);
    }

    private static Map<String, Object> click(String id, long tsMs) {
        return Map.of("impression_id", id, "ts", tsMs);
    }

    /** impression id -> result, failing on a second result for one impression. */
    private static Map<String, String> byImpression(Iterable<GenericRecord> results) {
        Map<String, String> out = new TreeMap<>();
        for (GenericRecord r : results) {
            String id = r.get("impression_id").toString();
            assertThat(out.put(id, r.get("result").toString())).as("one result for %s", id).isNull();
        }
        return out;
    }

    // tag::all-levels[]
    @FlowTestLevels
    void shouldJoinClicksWithinThirtyMinutesAndTimeOutTheRest(FlowTestLevel level, TestNames names) {
        PipelineSpec spec = WaitClickJoin.spec(names.name("wcj"), names.topic("impressions"), names.topic("clicks"),
                names.topic("results"), 2, false);
        try (PipelineUnderTest join = level.open(spec, "join")) {
            join.pipe("impressions", impression("i1", 0), 0L);
            join.pipe("impressions", impression("i2", 0), 0L);
            join.pipe("clicks", click("i1", 10 * MIN), 10 * MIN * MS);
            join.pipe("clicks", click("i3", 5 * MIN), 5 * MIN * MS);         // its impression comes later
            join.pipe("impressions", impression("i3", 4 * MIN), 4 * MIN * MS);
            assertThat(byImpression(join.awaitPayloads("results", 2)))
                    .containsExactly(Map.entry("i1", "joined"), Map.entry("i3", "joined"));

            join.advanceWatermark(30 * MIN * MS + 1);                          // both inputs, past i1's and i2's wait
            assertThat(byImpression(join.awaitPayloads("results", 1))).containsExactly(Map.entry("i2", "no_click"));
            assertThat(join.stateForPayload("join", "join", "impressions", impression("i2", 0))).isEmpty();
            assertThat(join.stateForPayload("join", "join", "impressions", impression("i3", 4 * MIN)))
                    .as("i3 waits until 34 min").isPresent();

            join.pipe("impressions", impression("i4", 31 * MIN), 31 * MIN * MS);
            join.completeStream("impressions");
            join.completeStream("clicks");                                     // +infinity: every wait is over
            assertThat(byImpression(join.awaitPayloads("results", 1))).containsExactly(Map.entry("i4", "no_click"));
            join.awaitCompleted("join");
            for (String id : new String[] {"i1", "i2", "i3", "i4"}) {
                assertThat(join.stateForPayload("join", "join", "impressions", impression(id, 0)))
                        .as("state of %s", id).isEmpty();
            }
        }
    }
    // end::all-levels[]
}
