package io.flowkafka.benchmarks.waitclick;

import io.flowkafka.examples.waitclick.WaitClickJoin;
import io.flowkafka.runtime.FlowRuntime;
import java.time.Duration;
import java.util.Properties;

/**
 * The flow-kafka side of the wait-click benchmark, run by {@link WaitClickVsFlink} in a JVM of its
 * own: the example's pipeline ({@link WaitClickJoin#spec}, finite sources, exactly_once_v2) until it
 * completes. Prints {@code T0 <epoch ms>} just before it creates the runtime and {@code FINISHED
 * <state> <epoch ms>} when the pipeline completed (or failed), then exits. With the system property
 * {@value WaitClickVsFlink#WARM_UP_PROPERTY} it first runs the same pipeline (named {@code <pipeline>-warm}) over
 * those topics, in this JVM, and prints {@code WARM <state> <epoch ms>}.
 *
 * <p>Arguments: {@code bootstrap pipeline impressionsTopic clicksTopic resultsTopic stateDir
 * partitions streamThreads [two-hop|keyed] [commitIntervalMs]} ({@code keyed}: {@link WaitClickJoin#keyedSpec};
 * {@code commitIntervalMs}: Kafka Streams' {@code commit.interval.ms}, its default of 100 ms under exactly-once when
 * absent).
 */
public final class WaitClickFlowJob {
    private WaitClickFlowJob() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 8 || args.length > 10) {
            System.err.println("usage: WaitClickFlowJob bootstrap pipeline impressionsTopic clicksTopic resultsTopic"
                    + " stateDir partitions streamThreads [two-hop|keyed] [commitIntervalMs]");
            System.exit(2);
        }
        WaitClickVsFlink.warmUpThenMeasure((impressions, clicks, results, suffix, measured) -> run(args,
                args[1] + suffix, impressions, clicks, results, args[5] + suffix, measured), args[2], args[3], args[4]);
    }

    /**
     * The two-hop pipeline's source alignment: the example's unless the job JVM's system property
     * {@code wcj.flow.alignment} says {@code none} or gives another drift bound (ISO-8601, e.g. {@code PT1M}).
     */
    private static Duration alignment() {
        String p = System.getProperty("wcj.flow.alignment");
        return p == null ? WaitClickJoin.ALIGNMENT_DRIFT : p.equals("none") ? null : Duration.parse(p);
    }

    /** Runs the pipeline over the given topics until it completes; with {@code measured}, prints T0 and FINISHED. */
    private static boolean run(String[] args, String pipeline, String impressions, String clicks, String results,
            String stateDir, boolean measured) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", stateDir);
        props.put("num.stream.threads", args[7]);
        if (args.length == 10) {
            props.put("commit.interval.ms", args[9]);
        }
        WaitClickVsFlink.addStreamsOverrides(props);
        if (measured) {
            System.out.println("T0 " + System.currentTimeMillis());
            System.out.flush();
        }
        boolean ok;
        boolean keyed = args.length >= 9 && args[8].equals("keyed");
        var spec = keyed ? WaitClickJoin.keyedSpec(pipeline, impressions, clicks, results, true)
                : WaitClickJoin.spec(pipeline, impressions, clicks, results, Integer.parseInt(args[6]), true,
                        alignment());
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            ok = runtime.awaitCompletion(Duration.ofMinutes(30));
            if (measured) {
                System.out.println("FINISHED " + runtime.state() + " " + System.currentTimeMillis());
                System.out.flush();
            }
        }
        return ok;
    }
}
