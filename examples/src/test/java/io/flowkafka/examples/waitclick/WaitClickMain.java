package io.flowkafka.examples.waitclick;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Properties;

/**
 * Runs one instance of the wait-click join (finite sources) in a child JVM until stopped or killed.
 * Args: bootstrap pipeline impressionsTopic clicksTopic resultsTopic stateDir.
 *
 * <p>System properties: {@code purge.ms}, {@code cache.bytes}; {@code session.timeout.ms} (the
 * consumer's, so that a dead instance's tasks move on sooner than the 45 s default);
 * {@code halt.at.timer} and {@code halt.in.step} run {@link HaltingWaitClickJoin} instead of
 * {@link WaitClickJoin}, which halts the JVM inside a timer-firing punctuation.
 */
public final class WaitClickMain {
    private WaitClickMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[5]);
        props.put("commit.interval.ms", "100");
        props.put("flow.timers.max.per.punctuation", "200");
        props.put("flow.internal.topics.purge.interval.ms", System.getProperty("purge.ms", "30000"));
        if (System.getProperty("cache.bytes") != null) {
            props.put("statestore.cache.max.bytes", System.getProperty("cache.bytes"));
        }
        String sessionTimeoutMs = System.getProperty("session.timeout.ms");
        if (sessionTimeoutMs != null) {
            props.put("consumer.session.timeout.ms", sessionTimeoutMs);
            props.put("consumer.heartbeat.interval.ms", Long.toString(Long.parseLong(sessionTimeoutMs) / 6));
        }
        PipelineSpec spec = Boolean.getBoolean("keyed") ? WaitClickJoin.keyedSpec(args[1], args[2], args[3], args[4], true)
                : WaitClickJoin.spec(args[1], args[2], args[3], args[4], 4, true);
        MeterRegistry meters = new SimpleMeterRegistry();
        if (System.getProperty("halt.at.timer") != null) {
            HaltingWaitClickJoin.atTimer = Long.getLong("halt.at.timer");
            HaltingWaitClickJoin.inStep = Integer.getInteger("halt.in.step", 2);
            HaltingWaitClickJoin.meters = meters;
            HaltingWaitClickJoin.bootstrapServers = args[0];
            HaltingWaitClickJoin.resultsTopic = args[4];
            spec = HaltingWaitClickJoin.halting(spec);
        }
        FlowRuntime runtime = FlowRuntime.create(spec, props, meters);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
