package io.flowkafka.benchmarks.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The wait-click join of {@code io.flowkafka.examples.waitclick.WaitClickJoin}, line by line, as a
 * Flink {@link KeyedProcessFunction} keyed by impression id: an impression waits up to 30 minutes of
 * event time for its click and then emits {@code joined} or {@code no_click}, once per impression.
 * A click processed before its impression waits for it (its own timer forgets it); clicks outside
 * the wait and duplicate impressions are ignored. Event-time timers fire when the watermark (the
 * minimum over both inputs' partitions) reaches impression time + 30 min.
 */
public class WaitClickFunction extends KeyedProcessFunction<String, Event, Result> {
    private static final long serialVersionUID = 1L;
    /** How long an impression waits for its click, in event time (WaitClickJoin.WAIT). */
    public static final long WAIT_MS = 30 * 60_000L;

    private transient ValueState<JoinState> state;

    @Override
    public void open(OpenContext openContext) {
        state = getRuntimeContext().getState(new ValueStateDescriptor<>("join", JoinState.class));
    }

    @Override
    public void processElement(Event e, Context ctx, Collector<Result> out) throws Exception {
        JoinState s = state.value();
        if (s == null) {
            s = new JoinState();
        }
        if (!e.click) {
            if (s.impressionTs != null) {
                return; // a duplicate impression: the first one already waits
            }
            s.user = e.user;
            s.impressionTs = e.ts;
            if (s.clickTs != null && clickCounts(e.ts, s.clickTs)) { // the click was processed first
                out.collect(new Result(e.id, s.user, "joined", e.ts, s.clickTs));
                s.joined = true;
            }
            ctx.timerService().registerEventTimeTimer(e.ts + WAIT_MS);
        } else if (s.impressionTs != null) {
            if (!s.joined && clickCounts(s.impressionTs, e.ts)) {
                s.clickTs = e.ts;
                out.collect(new Result(e.id, s.user, "joined", s.impressionTs, e.ts));
                s.joined = true;
            }
        } else if (s.clickTs == null) {
            s.clickTs = e.ts; // a click ahead of its impression: wait for it, then forget it
            ctx.timerService().registerEventTimeTimer(e.ts + WAIT_MS);
        }
        state.update(s);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Result> out) throws Exception {
        JoinState s = state.value();
        if (s == null) {
            return;
        }
        if (s.impressionTs == null) {
            state.clear(); // an orphan click's wait is over
        } else if (timestamp == s.impressionTs + WAIT_MS) {
            if (!s.joined) {
                out.collect(new Result(ctx.getCurrentKey(), s.user, "no_click", s.impressionTs, null));
            }
            state.clear();
        }
        // else: the orphan-click timer of an impression that arrived since; its own timer decides
    }

    /** A click counts when it comes within the wait after the impression (WaitClickJoin.clickCounts). */
    static boolean clickCounts(long impressionTs, long clickTs) {
        return clickTs >= impressionTs && clickTs - impressionTs <= WAIT_MS;
    }
}
