package io.flowkafka.benchmarks.waitclick;

import io.flowkafka.examples.waitclick.WaitClickData;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The wait-click join as a flow-kafka pipeline vs the same job in Flink, side by side on one in-JVM
 * broker (issue 3, "Benchmarks in benchmarks/RESULTS.md (b)").
 *
 * <p>This JVM runs the broker, writes the input once ({@link WaitClickData}: {@code --impressions}
 * impressions 200 ms apart in event time, a {@code --click-ratio} share clicked up to 40 minutes
 * later, keyed by impression id, over {@code --partitions} partitions per topic; each record's Kafka
 * timestamp is its event time, as live producers write it, unless {@code --record-timestamps produce}:
 * then the backlog's impressions all precede its clicks in Kafka time, which Kafka Streams, choosing
 * the next record of a task by timestamp, follows), and measures. Each
 * job runs in a JVM of its own with the same heap ({@code --job-heap}), reading the same two input
 * topics from the beginning and writing to a fresh results topic:
 * <ul>
 *   <li><b>flow_keyed</b>: {@link WaitClickFlowJob} with {@code WaitClickJoin.keyedSpec} (finite sources),
 *       the join reading both topics (keyed by impression id) directly as key-partitioned sources, one
 *       sub-topology, as a Kafka Streams user would write a join of co-partitioned topics, and as Flink's job
 *       reads them; exactly_once_v2, {@code --flow-threads} stream threads, {@code commit.interval.ms} =
 *       {@code --flow-commit-ms} (default: the checkpoint interval);</li>
 *   <li><b>flow</b> (only when asked for with {@code --jobs}): the same with the Flow-shaped spec
 *       ({@code WaitClickJoin.spec}: source computations, internal topics, the keyed join);</li>
 *   <li><b>plain</b> (only when asked for): {@link WaitClickPlainJob}, the same join as a hand-written
 *       Kafka Streams Processor API processor, same guarantee, threads and commit interval;</li>
 *   <li><b>flink</b>: {@code io.flowkafka.benchmarks.flink.WaitClickFlinkJob} (module
 *       benchmarks-flink, its own class path: {@code --flink-classpath}), a KeyedProcessFunction with
 *       RocksDB state and event-time timers, bounded Kafka sources, an exactly-once Kafka sink,
 *       {@code --checkpoint-ms} checkpoints, parallelism {@code --flink-parallelism}, local
 *       MiniCluster.</li>
 * </ul>
 * Throughput is input records (impressions + clicks) / seconds from the job's start ({@code T0}: the
 * flow JVM about to create its runtime; the Flink JVM, MiniCluster up, about to submit the job) until
 * a {@code read_committed} consumer has read a result for every impression. Every run's results are
 * checked against the reference (one per impression, the expected {@code joined}/{@code no_click}).
 * A warm-up run of each job on small input comes first (not reported), then {@code --runs} rounds
 * alternating the order; medians go to one summary row of {@code RESULTS.md}.
 *
 * <p>Run: {@code benchmarks/run-waitclick-vs-flink.sh} (builds, then runs this class; options: --help).
 *
 * <p>Over 700 lines: one command line, child-JVM orchestration, result checks and the report, kept in
 * one benchmark driver so that a run reads top to bottom; the jobs themselves live in their own classes.
 */
public final class WaitClickVsFlink {
    private static final long START_MS = 1_767_225_600_000L;
    private static final long SPACING_MS = 200;
    /** JVM options Flink needs on Java 17 (from Flink's distribution config, env.java.opts.all). */
    private static final List<String> FLINK_JAVA_OPTS = List.of(
            "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
            "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.text=ALL-UNNAMED",
            "--add-opens=java.base/java.time=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    enum Job {
        FLOW("flow-kafka"), FLOW_KEYED("flow-kafka-keyed"), PLAIN("Kafka Streams"), FLINK("Flink");

        final String label;

        Job(String label) {
            this.label = label;
        }
    }

    /** One job run. */
    record Run(Job job, int round, long records, double seconds, double launchToT0, double firstOutput,
            double jobCpuS, double driverCpuS, double otherCores, String finished, OutputMeter.Check check,
            double steadySeconds) {
        double rate() {
            return records / seconds;
        }

        /**
         * Records/s while the job went from 20% to 90% of the results: its throughput once running, without
         * its start (JVM, JIT compilers' first minutes, rebalance, first commits) and its end (last timers,
         * closing commit). NaN when the run did not get that far.
         */
        double steadyRate() {
            return steadySeconds > 0 ? records * STEADY_SHARE / steadySeconds : Double.NaN;
        }

        /** Records/s with the job JVM's own startup counted (JVM, and Flink's MiniCluster). */
        double rateFromLaunch() {
            return records / (seconds + launchToT0);
        }

        String describe() {
            return String.format(Locale.ROOT, "%,9.0f records/s (%.2f s from start; JVM launch to start %.2f s; first "
                            + "result at %.2f s; %,.0f records/s from 20%% to 90%% of the results; CPU s: job JVM %.1f = %.1f "
                            + "us/record, broker JVM %.1f; other processes %.2f cores; %s) %s", rate(), seconds, launchToT0,
                    firstOutput, steadyRate(), jobCpuS, jobCpuS * 1e6 / records, driverCpuS, otherCores, finished, check);
        }
    }

    /**
     * System property of the job JVMs: {@code impressionsTopic,clicksTopic,resultsTopic} of an input the job
     * processes, in the same JVM and with the same job, before the measured run ({@code --warm-jvm}).
     */
    static final String WARM_UP_PROPERTY = "wcj.warmup";

    /**
     * Prefix of system properties of the job JVMs that are added to both Kafka Streams jobs' properties (flow-kafka
     * and hand-written), e.g. {@code --job-jvm-opts "-Dwcj.streams.max.task.idle.ms=0"}.
     */
    static final String STREAMS_OVERRIDE_PREFIX = "wcj.streams.";

    /** Adds the {@link #STREAMS_OVERRIDE_PREFIX} system properties of this JVM to a Kafka Streams job's properties. */
    static void addStreamsOverrides(java.util.Properties props) {
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(STREAMS_OVERRIDE_PREFIX)) {
                props.put(name.substring(STREAMS_OVERRIDE_PREFIX.length()), System.getProperty(name));
            }
        }
    }

    /** One run of a job JVM's job over the given topics; a measured run prints T0 and FINISHED. */
    interface JobRun {
        boolean run(String impressions, String clicks, String results, String nameSuffix, boolean measured)
                throws Exception;
    }

    /**
     * A job JVM's main: the warm-up run over the {@link #WARM_UP_PROPERTY} topics if given (printing {@code WARM
     * <state> <epoch ms>}), then the measured run; exits 0 if both completed.
     */
    static void warmUpThenMeasure(JobRun job, String impressions, String clicks, String results) throws Exception {
        String[] warm = warmUpTopics();
        if (warm != null) {
            boolean ok = job.run(warm[0], warm[1], warm[2], "-warm", false);
            System.out.println("WARM " + (ok ? "COMPLETED" : "FAILED") + " " + System.currentTimeMillis());
            if (!ok) {
                System.exit(1);
            }
        }
        System.exit(job.run(impressions, clicks, results, "", true) ? 0 : 1);
    }

    /** The warm-up topics given by {@link #WARM_UP_PROPERTY}, or null. */
    static String[] warmUpTopics() {
        String v = System.getProperty(WARM_UP_PROPERTY);
        if (v == null || v.isBlank()) {
            return null;
        }
        String[] t = v.split(",");
        if (t.length != 3) {
            throw new IllegalArgumentException(WARM_UP_PROPERTY + " must be impressionsTopic,clicksTopic,resultsTopic "
                    + "but was '" + v + "'");
        }
        return t;
    }

    /** The share of the input between 20% and 90% of the results ({@link Run#steadyRate}). */
    static final double STEADY_SHARE = 0.7;

    /**
     * 3M impressions, ~5.1M records: long enough that a cold job JVM's start (JIT compilation, rebalance, first
     * commits) is a small share of the run, so the ratio is one of throughput; 600k (~1.02M records, ~30 s a run)
     * measures the start as much.
     */
    private int impressions = 3_000_000;
    private double clickRatio = 0.7;
    private long seed = 42;
    private int runs = 3;
    private int warmup = 20_000;
    private int partitions = 4;
    private int flowThreads = 2;
    private int flinkParallelism = 2;
    private long checkpointMs = 1000;
    /** flow-kafka's commit.interval.ms; negative: the same as {@link #checkpointMs}. */
    private long flowCommitMs = -1;
    private String flinkGuarantee = "exactly-once";
    private String jobHeap = "1g";
    /** Record timestamps of the input: the event time (as live producers write them), or the time of producing. */
    private boolean eventTimeStamps = true;
    /** Impressions each job JVM processes before its measured run ({@code --warm-jvm}); 0: none. */
    private int warmJvm;
    /** The input of the in-JVM warm-up, written once when {@link #warmJvm} > 0. */
    private Input jvmWarmInput;
    private List<String> jobJvmOpts = List.of();
    private long timeoutS = 600;
    private List<Job> jobs = List.of(Job.FLOW_KEYED, Job.FLINK);
    private String flinkClasspath;
    private Path results = Paths.get("benchmarks/RESULTS.md");
    private Path workDir;
    private final List<String> commandLine = new ArrayList<>();
    private final String stamp = Long.toString(System.currentTimeMillis() % 10_000_000, 36);
    private EmbeddedKafkaCluster cluster;
    private final List<Process> children = new CopyOnWriteArrayList<>();

    public static void main(String[] args) throws Exception {
        WaitClickVsFlink b = new WaitClickVsFlink();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("""
                        options (defaults in parentheses):
                          --impressions N       impressions in the input (3000000, ~5.1M records; clicks add ~click-ratio x N)
                          --click-ratio R       share of impressions clicked (0.7)
                          --seed N              input seed (42)
                          --runs N              interleaved rounds, medians reported (3)
                          --warmup N            impressions of the unreported warm-up run per job, 0 for none (20000)
                                                (each run is a JVM of its own: this warms the broker's JVM, not the
                                                jobs'; keep it with --warm-jvm)
                          --warm-jvm N          impressions each job JVM processes with the same job, on an input
                                                of its own, before the measured run: its JIT compilers have done most
                                                of their work when T0 is taken; CPU is counted from T0; 0 for none (0)
                          --partitions N        partitions of each input and results topic (4)
                          --flow-threads N      flow-kafka num.stream.threads (2)
                          --flink-parallelism N Flink parallelism = task slots (2)
                          --checkpoint-ms N     Flink checkpoint interval (1000)
                          --flow-commit-ms N    flow-kafka commit.interval.ms (default: the checkpoint interval, so
                                                both jobs publish exactly-once output at the same pace)
                          --flink-guarantee G   exactly-once | at-least-once (exactly-once)
                          --job-heap SIZE       -Xms and -Xmx of each job JVM (1g)
                          --record-timestamps T event (default: each input record's Kafka timestamp is its event
                                                time, as producers of live traffic write them) | produce (the time
                                                of writing the backlog: every impression before every click)
                          --job-jvm-opts "OPTS" extra options for both job JVMs, e.g. JFR or log levels
                                                (-Dorg.slf4j.simpleLogger.defaultLogLevel=info); -Dwcj.streams.K=V
                                                sets Kafka Streams property K of both Kafka Streams jobs;
                                                -Dwcj.flow.alignment=none|<ISO duration> the flow job's
                                                watermark_alignment (default the example's, 20m)
                          --timeout-s N         bound on one run (600)
                          --jobs LIST           of flow, flow_keyed, plain, flink (default flow_keyed,flink)
                          --flink-classpath CP  class path of the Flink JVM (the script passes it)
                          --work-dir DIR        state, checkpoints and job logs (a new temp directory)
                          --results FILE | --no-results   where to write the summary row (benchmarks/RESULTS.md)""");
                return;
            }
            if (a.equals("--no-results")) {
                b.results = null;
                b.commandLine.add(a);
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value");
            }
            String v = args[++i];
            if (!a.equals("--flink-classpath") && !a.equals("--work-dir")) {
                b.commandLine.add(a);
                b.commandLine.add(v);
            }
            switch (a) {
                case "--impressions" -> b.impressions = Integer.parseInt(v);
                case "--click-ratio" -> b.clickRatio = Double.parseDouble(v);
                case "--seed" -> b.seed = Long.parseLong(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--warmup" -> b.warmup = Integer.parseInt(v);
                case "--warm-jvm" -> b.warmJvm = Integer.parseInt(v);
                case "--partitions" -> b.partitions = Integer.parseInt(v);
                case "--flow-threads" -> b.flowThreads = Integer.parseInt(v);
                case "--flink-parallelism" -> b.flinkParallelism = Integer.parseInt(v);
                case "--checkpoint-ms" -> b.checkpointMs = Long.parseLong(v);
                case "--flow-commit-ms" -> b.flowCommitMs = Long.parseLong(v);
                case "--flink-guarantee" -> {
                    if (!v.equals("exactly-once") && !v.equals("at-least-once")) {
                        throw new IllegalArgumentException("--flink-guarantee exactly-once|at-least-once");
                    }
                    b.flinkGuarantee = v;
                }
                case "--job-heap" -> b.jobHeap = v;
                case "--record-timestamps" -> {
                    if (!v.equals("event") && !v.equals("produce")) {
                        throw new IllegalArgumentException("--record-timestamps event|produce");
                    }
                    b.eventTimeStamps = v.equals("event");
                }
                case "--job-jvm-opts" -> b.jobJvmOpts = v.isBlank() ? List.of() : List.of(v.trim().split("\\s+"));
                case "--timeout-s" -> b.timeoutS = Long.parseLong(v);
                case "--jobs" -> b.jobs = Stream.of(v.split(",")).map(s -> Job.valueOf(s.trim().toUpperCase(Locale.ROOT)))
                        .toList();
                case "--flink-classpath" -> b.flinkClasspath = v;
                case "--work-dir" -> b.workDir = Paths.get(v);
                case "--results" -> b.results = Paths.get(v);
                default -> throw new IllegalArgumentException("unknown option " + a + " (see --help)");
            }
        }
        if (b.jobs.contains(Job.FLINK) && (b.flinkClasspath == null || b.flinkClasspath.isBlank())) {
            throw new IllegalArgumentException("--flink-classpath is required to run the Flink job");
        }
        int exit = b.run();
        System.exit(exit);
    }

    private int run() throws Exception {
        long started = System.nanoTime();
        if (workDir == null) {
            workDir = Files.createTempDirectory("wcj-vs-flink-");
        }
        Files.createDirectories(workDir);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));
        String loadBefore = loadAverage();
        System.out.printf(Locale.ROOT, "WaitClickVsFlink: %,d impressions (click ratio %.2f, seed %d), %d partitions, %d "
                        + "round(s) of %s, flow-kafka %d stream thread(s) committing every %d ms, Flink parallelism %d, %s sink, %d ms checkpoints,"
                        + " job heap %s%s; work dir %s; load average %s; %s; Java %s%n", impressions, clickRatio, seed,
                partitions, runs, jobs, flowThreads, flowCommitMs(), flinkParallelism, flinkGuarantee, checkpointMs, jobHeap,
                warmJvm > 0 ? String.format(Locale.ROOT, ", each job JVM warmed up by the same job over %,d impressions "
                        + "before T0 (CPU counted from T0)", warmJvm) : "", workDir,
                loadBefore, System.getProperty("bench.built.from", "build unknown"), System.getProperty("java.version"));
        cluster = EmbeddedKafkaCluster.start();
        List<Run> all = new ArrayList<>();
        long inputRecords;
        try {
            if (warmup > 0) {
                Input warm = input("warm", warmup);
                for (Job job : jobs) {
                    Run r = runJob(job, 0, warm);
                    System.out.printf("  warm-up %-10s %s%n", job.label, r.describe());
                }
            }
            if (warmJvm > 0) {
                jvmWarmInput = input("jvm-warm", warmJvm);
            }
            Input in = input("main", impressions);
            inputRecords = in.records();
            for (int round = 1; round <= runs; round++) {
                List<Job> order = new ArrayList<>(jobs);
                if (round % 2 == 0) {
                    Collections.reverse(order); // alternate, so that neither job always runs first
                }
                for (Job job : order) {
                    Run r = runJob(job, round, in);
                    all.add(r);
                    System.out.printf("  round %d %-10s %s%n", round, job.label, r.describe());
                }
            }
        } finally {
            cluster.close();
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        System.out.println();
        System.out.printf(Locale.ROOT, "Medians over %d round(s), %,d input records (%,d impressions + %,d clicks); took %.1f "
                        + "min; load average before %s, after %s:%n", runs, inputRecords, impressions,
                inputRecords - impressions, minutes, loadBefore, loadAverage());
        System.out.println("| job | records/s (median) | seconds from start | JVM launch to start (s) | records/s from JVM "
                + "launch | first result (s) | records/s from 20% to 90% of the results | job JVM CPU us/record | broker "
                + "JVM CPU s | other processes (cores) | checks |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
        for (Job job : jobs) {
            List<Run> rs = all.stream().filter(r -> r.job() == job).toList();
            long bad = rs.stream().filter(r -> !r.check().ok()).count();
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f | %,.0f | %.2f | %,.0f | %.1f | %.1f | %.2f | %d of %d ok |%n",
                    job.label, median(rs, Run::rate), median(rs, Run::seconds), median(rs, Run::launchToT0),
                    median(rs, Run::rateFromLaunch), median(rs, Run::firstOutput), median(rs, Run::steadyRate),
                    median(rs, r -> r.jobCpuS() * 1e6 / r.records()),
                    median(rs, Run::driverCpuS), median(rs, Run::otherCores), rs.size() - bad, rs.size());
        }
        printDrift(all);
        long problems = all.stream().filter(r -> !r.check().ok()).count();
        List<String> rows = new ArrayList<>();
        for (Job flowJob : List.of(Job.FLOW, Job.FLOW_KEYED)) {
            if (!jobs.contains(flowJob) || !jobs.contains(Job.FLINK) || runs <= 0) {
                continue;
            }
            double flow = median(all.stream().filter(r -> r.job() == flowJob).toList(), Run::rate);
            double flink = median(all.stream().filter(r -> r.job() == Job.FLINK).toList(), Run::rate);
            double ratio = flow / flink;
            double fromLaunch = median(all.stream().filter(r -> r.job() == flowJob).toList(), Run::rateFromLaunch)
                    / median(all.stream().filter(r -> r.job() == Job.FLINK).toList(), Run::rateFromLaunch);
            // with an in-JVM warm-up, "from launch" would count the warm-up run: not reported
            String startup = warmJvm > 0 ? "" : String.format(Locale.ROOT, "; %.2fx counting JVM and MiniCluster "
                    + "startup", fromLaunch);
            System.out.printf(Locale.ROOT, "%n%s %,.0f records/s, Flink %,.0f records/s: ratio %.2fx "
                    + "(goal >= 1.0: %s%s)%n", flowJob.label, flow, flink, ratio, ratio >= 1.0 ? "met" : "missed", startup);
            String what = flowJob == Job.FLOW ? "flow-kafka pipeline" : "flow-kafka keyed-source pipeline (the join "
                    + "reads both topics, keyed by impression id, directly; one sub-topology)";
            rows.add(String.format(Locale.ROOT, "| wait-click join throughput, %s-record backlog (%s impressions + "
                            + "clicks, Kafka record timestamps = %s), %d partitions, each job in its own JVM (heap %s%s): %s "
                            + "(exactly_once_v2, commit.interval.ms %d, %d stream thread%s) vs Flink 2.2 KeyedProcessFunction (RocksDB, timers, "
                            + "%s Kafka sink, %d ms checkpoints, parallelism %d, MiniCluster); median of %d "
                            + "interleaved rounds | %,.0f records/s | %,.0f records/s | %.2fx (goal >= 1.0: %s%s%s) | %s | %s |",
                    compact(inputRecords), compact(impressions), eventTimeStamps ? "event time" : "produce time",
                    partitions, jobHeap, warmNote(), what, flowCommitMs(), flowThreads,
                    flowThreads == 1 ? "" : "s", flinkGuarantee, checkpointMs, flinkParallelism, runs, flow, flink, ratio,
                    ratio >= 1.0 ? "met" : "missed", startup, problems == 0 ? "; results checked: ok"
                            : "; result check problems in " + problems + " run(s)", LocalDate.now(),
                    "`benchmarks/run-waitclick-vs-flink.sh" + (commandLine.isEmpty() ? "" : " "
                            + String.join(" ", commandLine)) + "`"));
            double flowSteady = median(all.stream().filter(r -> r.job() == flowJob).toList(), Run::steadyRate);
            double flinkSteady = median(all.stream().filter(r -> r.job() == Job.FLINK).toList(), Run::steadyRate);
            System.out.printf(Locale.ROOT, "%s from 20%% to 90%% of the results %,.0f records/s, Flink %,.0f records/s: "
                    + "ratio %.2fx%n", flowJob.label, flowSteady, flinkSteady, flowSteady / flinkSteady);
            rows.add(String.format(Locale.ROOT, "| wait-click join throughput once running (records/s while the results "
                            + "went from 20%% to 90%%: without JVM start, JIT warm-up, rebalance and the closing commit), "
                            + "%s-record backlog, %d partitions%s: %s vs Flink 2.2 KeyedProcessFunction (same runs as the "
                            + "row above); median of %d interleaved rounds | %,.0f records/s | %,.0f records/s | %.2fx (goal >= "
                            + "1.0: %s) | %s | %s |",
                    compact(inputRecords), partitions, warmNote().replace("; ", ", "), flowJob == Job.FLOW ? "flow-kafka pipeline"
                            : "flow-kafka keyed-source pipeline", runs, flowSteady, flinkSteady, flowSteady / flinkSteady,
                    flowSteady / flinkSteady >= 1.0 ? "met" : "missed", LocalDate.now(),
                    "`benchmarks/run-waitclick-vs-flink.sh" + (commandLine.isEmpty() ? "" : " "
                            + String.join(" ", commandLine)) + "`"));
        }
        if (jobs.contains(Job.PLAIN) && runs > 0) {
            double plain = median(all.stream().filter(r -> r.job() == Job.PLAIN).toList(), Run::rate);
            if (jobs.contains(Job.FLINK)) {
                double flink = median(all.stream().filter(r -> r.job() == Job.FLINK).toList(), Run::rate);
                System.out.printf(Locale.ROOT, "%nKafka Streams (hand-written) %,.0f records/s, Flink %,.0f records/s: "
                        + "ratio %.2fx%n", plain, flink, plain / flink);
            }
            for (Job flowJob : List.of(Job.FLOW, Job.FLOW_KEYED)) {
                if (!jobs.contains(flowJob)) {
                    continue;
                }
                double flow = median(all.stream().filter(r -> r.job() == flowJob).toList(), Run::rate);
                double cpuFlow = median(all.stream().filter(r -> r.job() == flowJob).toList(),
                        r -> r.jobCpuS() * 1e6 / r.records());
                double cpuPlain = median(all.stream().filter(r -> r.job() == Job.PLAIN).toList(),
                        r -> r.jobCpuS() * 1e6 / r.records());
                System.out.printf(Locale.ROOT, "%s %,.0f records/s, Kafka Streams (hand-written) %,.0f records/s: ratio "
                        + "%.2fx%n", flowJob.label, flow, plain, flow / plain);
                double flowSteady = median(all.stream().filter(r -> r.job() == flowJob).toList(), Run::steadyRate);
                double plainSteady = median(all.stream().filter(r -> r.job() == Job.PLAIN).toList(), Run::steadyRate);
                System.out.printf(Locale.ROOT, "%s from 20%% to 90%% of the results %,.0f records/s, Kafka Streams "
                        + "(hand-written) %,.0f records/s: ratio %.2fx%n", flowJob.label, flowSteady, plainSteady,
                        flowSteady / plainSteady);
                rows.add(String.format(Locale.ROOT, "| wait-click join throughput, %s-record backlog (%s impressions + "
                                + "clicks, Kafka record timestamps = %s), %d partitions, each job in its own JVM (heap %s%s): "
                                + "%s vs the same join as a hand-written Kafka Streams Processor API processor (RocksDB "
                                + "stores with changelogs, state cached, timers rows of a second store; both "
                                + "exactly_once_v2, commit.interval.ms %d, %d stream thread%s); median of %d interleaved "
                                + "rounds | %,.0f records/s | %,.0f records/s | %.2fx (no numeric goal: flow-kafka's cost "
                                + "over Kafka Streams; job CPU %.0f vs %.0f us/record%s) | %s | %s |",
                        compact(inputRecords), compact(impressions), eventTimeStamps ? "event time" : "produce time",
                        partitions, jobHeap, warmNote(), flowJob == Job.FLOW ? "flow-kafka pipeline" : "flow-kafka keyed-source "
                                + "pipeline", flowCommitMs(), flowThreads, flowThreads == 1 ? "" : "s", runs, flow, plain,
                        flow / plain, cpuFlow, cpuPlain, problems == 0 ? "; results checked: ok"
                                : "; result check problems in " + problems + " run(s)", LocalDate.now(),
                        "`benchmarks/run-waitclick-vs-flink.sh" + (commandLine.isEmpty() ? "" : " "
                                + String.join(" ", commandLine)) + "`"));
            }
        }
        rows.forEach(System.out::println);
        if (results != null && !rows.isEmpty()) {
            SummaryRows.upsert(results, rows);
            System.out.println("updated " + results);
        }
        return problems == 0 ? 0 : 1;
    }

    /** Input topics written once and read by every run. */
    record Input(String impressionsTopic, String clicksTopic, int impressions, long records, byte[] expected) {
    }

    private Input input(String name, int n) throws Exception {
        WaitClickData data = WaitClickData.generate(n, clickRatio, START_MS, SPACING_MS, seed);
        byte[] expected = new byte[n];
        for (Map.Entry<String, String> e : data.expectedResults().entrySet()) {
            int id = OutputMeter.impressionNumber(e.getKey().getBytes(StandardCharsets.UTF_8));
            expected[id] = e.getValue().equals("joined") ? OutputMeter.JOINED : OutputMeter.NO_CLICK;
        }
        String imp = "wcj-" + stamp + "-" + name + "-impressions";
        String clk = "wcj-" + stamp + "-" + name + "-clicks";
        // no time-based retention: with event-time record timestamps (2026-01-01 on) the broker would delete the input
        cluster.createTopic(imp, partitions, Map.of("retention.ms", "-1"));
        cluster.createTopic(clk, partitions, Map.of("retention.ms", "-1"));
        long t = System.nanoTime();
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(128 * 1024));
        // one request in flight: the first batch of a just-created partition cannot be overtaken
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        AtomicReference<Exception> error = new AtomicReference<>();
        org.apache.kafka.clients.producer.Callback check = (md, e) -> {
            if (e != null) {
                error.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            data.impressions().entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> producer.send(
                    new ProducerRecord<>(imp, null, eventTimeStamps ? e.getValue() : null, e.getKey(),
                            WaitClickData.impressionJson(e.getKey(), e.getValue())), check));
            data.clicks().forEach(c -> producer.send(
                    new ProducerRecord<>(clk, null, eventTimeStamps ? c.getValue() : null, c.getKey(),
                            WaitClickData.clickJson(c.getKey(), c.getValue())), check));
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("writing the input failed", error.get());
        }
        long joined = 0;
        for (byte b : expected) {
            joined += b == OutputMeter.JOINED ? 1 : 0;
        }
        long records = n + (long) data.clicks().size();
        System.out.printf(Locale.ROOT, "  input %s: %,d impressions + %,d clicks = %,d records written in %.1f s "
                        + "(event time spans %.1f h; reference: %,d joined, %,d no_click)%n", name, n, data.clicks().size(),
                records, (System.nanoTime() - t) / 1e9, n * SPACING_MS / 3.6e6, joined, n - joined);
        return new Input(imp, clk, n, records, expected);
    }

    private Run runJob(Job job, int round, Input in) throws Exception {
        String runId = stamp + "-" + (round == 0 ? "warm" : "r" + round) + "-" + job.name().toLowerCase(Locale.ROOT);
        String resultsTopic = "wcj-" + runId + "-results";
        cluster.createTopic(resultsTopic, partitions);
        Path runDir = workDir.resolve(runId);
        Files.createDirectories(runDir);
        Path log = workDir.resolve(runId + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + jobHeap);
        cmd.add("-Xmx" + jobHeap);
        // a temporary directory of the run's own (deleted with its state): a job JVM killed at a timeout would
        // leave RocksDB's native library in the system's
        Files.createDirectories(runDir.resolve("tmp"));
        cmd.add("-Djava.io.tmpdir=" + runDir.resolve("tmp"));
        cmd.addAll(jobJvmOpts);
        if (jvmWarmInput != null && round > 0) {
            String warmResults = "wcj-" + runId + "-jvm-warm-results";
            cluster.createTopic(warmResults, partitions);
            cmd.add("-D" + WARM_UP_PROPERTY + "=" + jvmWarmInput.impressionsTopic() + "," + jvmWarmInput.clicksTopic()
                    + "," + warmResults);
        }
        if (job == Job.FLOW || job == Job.FLOW_KEYED) {
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), WaitClickFlowJob.class.getName(),
                    cluster.bootstrapServers(), "wcj-flow-" + runId, in.impressionsTopic(), in.clicksTopic(), resultsTopic,
                    runDir.resolve("state").toString(), Integer.toString(partitions), Integer.toString(flowThreads),
                    job == Job.FLOW_KEYED ? "keyed" : "two-hop", Long.toString(flowCommitMs())));
        } else if (job == Job.PLAIN) {
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), WaitClickPlainJob.class.getName(),
                    cluster.bootstrapServers(), "wcj-plain-" + runId, in.impressionsTopic(), in.clicksTopic(),
                    resultsTopic, runDir.resolve("state").toString(), Integer.toString(flowThreads),
                    Long.toString(flowCommitMs())));
        } else {
            cmd.addAll(FLINK_JAVA_OPTS);
            cmd.addAll(List.of("-cp", flinkClasspath, "io.flowkafka.benchmarks.flink.WaitClickFlinkJob",
                    cluster.bootstrapServers(), in.impressionsTopic(), in.clicksTopic(), resultsTopic, runId,
                    runDir.toString(), "--parallelism", Integer.toString(flinkParallelism), "--checkpoint-ms",
                    Long.toString(checkpointMs), "--guarantee", flinkGuarantee));
        }
        OutputMeter meter = new OutputMeter(cluster.bootstrapServers(), resultsTopic, partitions, in.expected());
        long[] cpu0 = {systemBusyTicks(), selfCpuTicks()};
        long launch = System.currentTimeMillis();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        children.add(p);
        AtomicReference<Long> t0 = new AtomicReference<>();
        // with an in-JVM warm-up, CPU is counted from T0: {machine busy, this JVM, the job JVM} ticks at T0
        AtomicReference<long[]> cpuAtT0 = new AtomicReference<>();
        AtomicReference<String> finished = new AtomicReference<>("");
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                    BufferedWriter w = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
                String line;
                while ((line = r.readLine()) != null) {
                    w.write(line);
                    w.newLine();
                    w.flush();
                    if (line.startsWith("T0 ")) {
                        if (jvmWarmInput != null) {
                            cpuAtT0.set(new long[] {systemBusyTicks(), selfCpuTicks(), procCpuTicks(p.pid())});
                        }
                        t0.set(Long.parseLong(line.substring(3).trim()));
                    } else if (line.startsWith("FINISHED ")) {
                        finished.set(line.split(" ")[1]);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process ended
            }
        }, "log-" + runId);
        reader.setDaemon(true);
        reader.start();
        long deadline = System.currentTimeMillis() + timeoutS * 1000;
        long exitedAt = -1;
        long jobCpu = -1; // the job JVM's CPU ticks, sampled while it lives (it may exit as its last results commit)
        while (!meter.isComplete() && System.currentTimeMillis() < runDeadline(deadline, t0.get())) {
            meter.awaitComplete(100);
            long ticks = procCpuTicks(p.pid());
            if (ticks >= 0 && p.isAlive()) {
                jobCpu = ticks;
            }
            if (!p.isAlive()) {
                if (exitedAt < 0) {
                    exitedAt = System.currentTimeMillis();
                }
                // the job says it finished: its last commit must be readable within a few seconds
                if (System.currentTimeMillis() - exitedAt > 15_000) {
                    break;
                }
            }
        }
        if (p.isAlive()) {
            long ticks = procCpuTicks(p.pid());
            jobCpu = ticks >= 0 ? ticks : jobCpu;
        }
        long[] cpu1 = {systemBusyTicks(), selfCpuTicks()};
        long end = meter.isComplete() ? meter.completeAtMs() : System.currentTimeMillis();
        if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroy();
            if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
            }
        }
        children.remove(p);
        reader.join(5_000);
        Thread.sleep(1_000); // late duplicates, if any
        OutputMeter.Check check = meter.finish();
        long start = t0.get() != null ? t0.get() : launch;
        double seconds = (end - start) / 1000.0;
        double wall = Math.max(1, System.currentTimeMillis() - launch) / 1000.0;
        long[] atT0 = cpuAtT0.get();
        long from = launch;
        if (atT0 != null) { // counted from T0: the in-JVM warm-up's CPU is not the measured run's
            cpu0 = new long[] {atT0[0], atT0[1]};
            jobCpu = jobCpu < 0 || atT0[2] < 0 ? -1 : jobCpu - atT0[2];
            from = start;
        }
        double jobCpuS = jobCpu < 0 ? Double.NaN : jobCpu / 100.0;
        double driverCpuS = (cpu1[1] - cpu0[1]) / 100.0;
        double otherCores = Math.max(0, ((cpu1[0] - cpu0[0]) / 100.0 - driverCpuS - (jobCpu < 0 ? 0 : jobCpuS))
                / (Math.max(1, end - from) / 1000.0));
        String status = finished.get().isEmpty() ? "exit " + (p.isAlive() ? "?" : p.exitValue()) : finished.get();
        StringBuilder tenths = new StringBuilder();
        for (int k = 1; k <= 10; k++) {
            tenths.append(k == 1 ? "" : " ").append(meter.tenthAtMs(k) < 0 ? "-"
                    : String.format(Locale.ROOT, "%.1f", (meter.tenthAtMs(k) - start) / 1000.0));
        }
        System.out.printf("  %s run %s: 10%%, 20%%, ... 100%% of the results at %s s from start%n", job.label, runId,
                tenths);
        Run run = new Run(job, round, in.records(), seconds, (start - launch) / 1000.0,
                meter.firstAtMs() < 0 ? Double.NaN : (meter.firstAtMs() - start) / 1000.0, jobCpuS, driverCpuS,
                otherCores, status, check, steadySeconds(meter));
        if (!check.ok() || (!status.equals("COMPLETED") && !status.equals("SUCCEEDED"))) {
            System.out.printf("  %s run %s: %s; wall %.1f s; last lines of %s:%n", job.label, runId, check.problem(), wall,
                    log);
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            lines.subList(Math.max(0, lines.size() - 40), lines.size()).forEach(l -> System.out.println("    | " + l));
        }
        cleanUp(in, runDir);
        return run;
    }

    /** Deletes every topic but the inputs (results, flow-kafka's internal and changelog topics) and the run's state. */
    private void cleanUp(Input keep, Path runDir) {
        try {
            Admin admin = cluster.admin();
            Set<String> topics = admin.listTopics().names().get();
            List<String> delete = topics.stream().filter(t -> !t.startsWith("__") && !t.endsWith("-impressions")
                    && !t.endsWith("-clicks")).toList();
            printTopicSizes(admin, delete);
            if (!delete.isEmpty()) {
                admin.deleteTopics(delete).all().get();
            }
        } catch (Exception e) {
            System.out.println("  (could not delete the run's topics: " + e + ")");
        }
        try (Stream<Path> files = Files.walk(runDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            System.out.println("  (could not delete " + runDir + ": " + e + ")");
        }
    }

    /**
     * What the run wrote: per topic, the sum of its partitions' end offsets (records and transaction markers: each
     * committed transaction adds a marker to every partition it wrote), largest first. Changelog volume and
     * transaction count are where Kafka Streams jobs differ from one another in broker work.
     */
    private static void printTopicSizes(Admin admin, List<String> topics) {
        try {
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request =
                    new java.util.HashMap<>();
            admin.describeTopics(topics).allTopicNames().get().forEach((name, d) -> d.partitions().forEach(p ->
                    request.put(new org.apache.kafka.common.TopicPartition(name, p.partition()),
                            org.apache.kafka.clients.admin.OffsetSpec.latest())));
            Map<String, Long> sizes = new java.util.TreeMap<>();
            admin.listOffsets(request).all().get().forEach((tp, info) -> sizes.merge(tp.topic(), info.offset(), Long::sum));
            StringBuilder line = new StringBuilder("  topics written (end offsets: records + transaction markers):");
            sizes.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .forEach(e -> line.append(String.format(Locale.ROOT, " %s %,d;", e.getKey(), e.getValue())));
            System.out.println(line);
        } catch (Exception e) {
            System.out.println("  (could not read the run's topic sizes: " + e + ")");
        }
    }

    /** utime + stime of a process, in clock ticks (USER_HZ, 100 on Linux). */
    private static long procCpuTicks(long pid) {
        try {
            String stat = Files.readString(Paths.get("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long selfCpuTicks() {
        return procCpuTicks(ProcessHandle.current().pid());
    }

    /** Busy clock ticks of the whole machine (all but idle and iowait). */
    private static long systemBusyTicks() {
        try {
            String[] f = Files.readAllLines(Paths.get("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Paths.get("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * Seconds from 20% to 90% of the results, or NaN when unknown or shorter than two commit (checkpoint)
     * intervals: results become visible at commits, and a window of one or two commits says nothing about a rate.
     */
    private double steadySeconds(OutputMeter meter) {
        long from = meter.tenthAtMs(2);
        long to = meter.tenthAtMs(9);
        if (from < 0 || to < 0 || to - from < 2 * Math.max(flowCommitMs(), checkpointMs)) {
            return Double.NaN;
        }
        return (to - from) / 1000.0;
    }

    /** The bound of a run: {@code deadline} (launch + timeout), or T0 + timeout after an in-JVM warm-up. */
    private long runDeadline(long deadline, Long t0) {
        return t0 == null || jvmWarmInput == null ? deadline : t0 + timeoutS * 1000;
    }

    /** What the summary rows say about an in-JVM warm-up ({@code --warm-jvm}): empty without one. */
    private String warmNote() {
        return warmJvm <= 0 ? "" : String.format(Locale.ROOT, "; warm: each first ran the same job over an input of "
                + "its own, %s impressions", compact(warmJvm));
    }

    /** The commit interval of the flow-kafka jobs: the checkpoint interval unless given. */
    private long flowCommitMs() {
        return flowCommitMs < 0 ? checkpointMs : flowCommitMs;
    }

    /** The median of the known (non-NaN) values. */
    /**
     * Per job, the range of its job JVM's CPU per record over the rounds, and a warning when it spans more than
     * {@value #DRIFT_WARNING} of the median: the same work costing that much more in one round than in another
     * means the machine changed speed during the run (these VMs do), and ratios of rounds that ran at different
     * speeds mislead.
     */
    private void printDrift(List<Run> all) {
        List<String> drifted = new ArrayList<>();
        StringBuilder line = new StringBuilder("job JVM CPU us/record per round (min-max):");
        for (Job job : jobs) {
            double[] v = all.stream().filter(r -> r.job() == job && !Double.isNaN(r.jobCpuS()))
                    .mapToDouble(r -> r.jobCpuS() * 1e6 / r.records()).sorted().toArray();
            if (v.length == 0) {
                continue;
            }
            double med = medianOfSorted(v);
            line.append(String.format(Locale.ROOT, " %s %.1f-%.1f;", job.label, v[0], v[v.length - 1]));
            if (v.length > 1 && (v[v.length - 1] - v[0]) > DRIFT_WARNING * med) {
                drifted.add(job.label);
            }
        }
        System.out.println(line);
        if (!drifted.isEmpty()) {
            System.out.printf(Locale.ROOT, "WARNING: the CPU per record of %s varied by more than %.0f%% between rounds: "
                    + "the machine's speed changed during the run; compare each round's jobs with each other, or "
                    + "run again%n", String.join(", ", drifted), DRIFT_WARNING * 100);
        }
    }

    /** {@link #printDrift}'s threshold: a job's CPU per record range over its median. */
    static final double DRIFT_WARNING = 0.20;

    private static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        return medianOfSorted(runs.stream().mapToDouble(f).filter(d -> !Double.isNaN(d)).sorted().toArray());
    }

    private static double medianOfSorted(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String compact(long n) {
        if (n >= 1_000_000 && n % 100_000 == 0) {
            return (n % 1_000_000 == 0 ? Long.toString(n / 1_000_000) : String.format(Locale.ROOT, "%.1f", n / 1e6)) + "M";
        }
        if (n >= 1_000 && n % 1_000 == 0) {
            return n / 1_000 + "k";
        }
        if (n >= 1_000_000) {
            return String.format(Locale.ROOT, "%.2fM", n / 1e6);
        }
        return String.format(Locale.ROOT, "%,d", n);
    }
}
