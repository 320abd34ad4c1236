package io.flowkafka.examples.waitclick;

import io.flowkafka.runtime.FlowRuntime;
import java.time.Duration;
import java.util.Properties;

/**
 * Runs one instance of the wait-click join (finite sources) in a child JVM until stopped or killed.
 * Args: bootstrap pipeline impressionsTopic clicksTopic resultsTopic stateDir.
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
        FlowRuntime runtime = FlowRuntime.create(WaitClickJoin.spec(args[1], args[2], args[3], args[4], 4, true), props);
        runtime.start();
        if (!runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(2))) {
            System.out.println("FAILED to reach RUNNING: " + runtime.state());
            System.exit(1);
        }
        System.out.println("RUNNING");
        System.out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(runtime::close));
        Thread.currentThread().join();
    }
}
