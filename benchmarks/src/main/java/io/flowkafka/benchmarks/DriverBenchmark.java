package io.flowkafka.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Messages per second through the wait-click join on {@link FlowTestDriver} (issue 5: goal >= 100k
 * records/s on one core), beside a hand-written Processor API processor doing the same join on a
 * plain {@link TopologyTestDriver}, with the same hops as the flow spec (a repartition topic per
 * input against the two-hop spec). Both run in this thread; no broker.
 *
 * <ul>
 *   <li><b>Input</b>: {@code --impressions} (118k) impressions 200 ms apart in event time, 70% of
 *       them clicked up to 40 min later (seed 42: {@code WaitClickData.generate}'s rules; ~200k
 *       records in all), interleaved in event-time order (as the example's driver test does) and
 *       encoded to JSON bytes before the clock starts. Every {@code --advance-every} (1000)
 *       records the wall clock moves {@code --advance-ms} (200 ms, Flow's watermark interval), so
 *       watermarks are sent and due timers fire. At the end one "tick" impression and click far
 *       past every wait move both watermarks beyond every trigger, and {@code --drain-steps} (60)
 *       further advances let the remaining timers fire (Flow fires at most 1000 per step).</li>
 *   <li><b>Measured</b>: wall-clock time of that loop (piping, advancing, ticks, drain), on one
 *       thread; records/s = input records / seconds; the thread's CPU time per record too. The
 *       driver is created before and the results read after the clock.</li>
 *   <li><b>Check</b>: one result per impression (the tick's own result aside), each the one
 *       {@code WaitClickData.expectedResults} gives.</li>
 *   <li><b>Rounds</b>: a warm-up run of each job on {@code --warmup-impressions} (30k; not
 *       reported), then {@code --runs} (3) rounds,
 *       the order alternating; the row gives the medians.</li>
 * </ul>
 *
 * <p>Run: {@code benchmarks/run-driver.sh} (options: --help).
 */
public final class DriverBenchmark {
    static final double GOAL = 100_000;
    private static final long MIN = 60_000L;
    private static final long START_MS = 1_767_225_600_000L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private int impressions = 118_000;
    private int runs = 3;
    private int warmup = 1;
    private int warmupImpressions = 30_000;
    private int advanceEvery = 1000;
    private long advanceMs = 200;
    private int drainSteps = 60;
    private Path results = Paths.get("benchmarks/RESULTS.md");
    private Path jfrDir;
    /** The flow side's spec: the example's two-hop pipeline, or its keyed-source shape (WaitClickJoin.keyedSpec). */
    private boolean keyed;
    /** FlowTestDriver's flow.testing.watermark.sends: each-change (its default) or interval. */
    private String watermarkSends = FlowTestDriver.WATERMARK_SENDS_EACH_CHANGE;
    /** The JFR recording's name for the next measured run; null: none (warm-up). */
    private String jfrName;
    private final List<String> commandLine = new ArrayList<>();

    /** One input record, encoded. */
    private record In(String topic, byte[] key, byte[] value) {
    }

    /** The input in piping order, and the result each impression must get. */
    private record Input(List<In> records, int impressions, int clicks, Map<String, String> expected) {
    }

    /** One run: records/s, thread CPU us/record, other processes' cores, problem (null if ok). */
    private record Run(double rate, double cpuUs, double allocBytes, double otherCores, long results, String problem) {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        DriverBenchmark b = new DriverBenchmark();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help")) {
                System.out.println("options: --impressions N (118000) --runs N (3) --warmup N (1) --warmup-impressions N (30000) --advance-every N (1000)"
                        + " --advance-ms N (200) --drain-steps N (60) --results FILE | --no-results"
                        + " --jfr DIR (one JFR recording of execution samples per measured run)"
                        + " --flow-spec two-hop|keyed (two-hop: WaitClickJoin.spec; keyed: WaitClickJoin.keyedSpec)"
                        + " --watermark-sends each-change|interval (FlowTestDriver's flow.testing.watermark.sends)");
                return;
            }
            b.commandLine.add(a);
            if (a.equals("--no-results")) {
                b.results = null;
                continue;
            }
            String v = args[++i];
            b.commandLine.add(v);
            switch (a) {
                case "--impressions" -> b.impressions = Integer.parseInt(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--warmup" -> b.warmup = Integer.parseInt(v);
                case "--warmup-impressions" -> b.warmupImpressions = Integer.parseInt(v);
                case "--advance-every" -> b.advanceEvery = Integer.parseInt(v);
                case "--advance-ms" -> b.advanceMs = Long.parseLong(v);
                case "--drain-steps" -> b.drainSteps = Integer.parseInt(v);
                case "--results" -> b.results = Paths.get(v);
                case "--jfr" -> b.jfrDir = Paths.get(v);
                case "--watermark-sends" -> {
                    if (!v.equals(FlowTestDriver.WATERMARK_SENDS_EACH_CHANGE)
                            && !v.equals(FlowTestDriver.WATERMARK_SENDS_INTERVAL)) {
                        throw new IllegalArgumentException("--watermark-sends each-change|interval");
                    }
                    b.watermarkSends = v;
                }
                case "--flow-spec" -> {
                    if (!v.equals("two-hop") && !v.equals("keyed")) {
                        throw new IllegalArgumentException("--flow-spec two-hop|keyed");
                    }
                    b.keyed = v.equals("keyed");
                }
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        int code = b.run();
        System.exit(code);
    }

    private int run() throws IOException {
        if (jfrDir != null) {
            java.nio.file.Files.createDirectories(jfrDir);
        }
        Input input = input(impressions);
        int n = input.records().size();
        System.out.printf("DriverBenchmark: wait-click join, %,d records (%,d impressions + %,d clicks), one thread; "
                + "wall clock +%d ms every %d records, %d drain steps; %d warm-up run(s) of %,d impressions, %d rounds; built from %s; "
                + "load average %s%n", n, input.impressions(), input.clicks(), advanceMs, advanceEvery, drainSteps,
                warmup, Math.min(warmupImpressions, impressions), runs, System.getProperty("bench.built.from", "unknown"), CpuSampler.loadAverage());
        Input warmupInput = warmup > 0 ? input(Math.min(warmupImpressions, impressions)) : input;
        for (int w = 1; w <= warmup; w++) {
            Run f = flow(warmupInput);
            Run p = plain(warmupInput);
            System.out.printf("  warm-up %d: flow %,9.0f records/s (%s), plain %,9.0f records/s (%s)%n", w, f.rate(),
                    check(f), p.rate(), check(p));
        }
        Map<Boolean, List<Run>> all = new HashMap<>();
        int problems = 0;
        for (int round = 1; round <= runs; round++) {
            for (boolean flow : round % 2 == 1 ? List.of(true, false) : List.of(false, true)) {
                jfrName = "driver-" + (flow ? "flow" : "plain") + "-r" + round;
                Run r = flow ? flow(input) : plain(input);
                jfrName = null;
                all.computeIfAbsent(flow, k -> new ArrayList<>()).add(r);
                problems += r.problem() == null ? 0 : 1;
                System.out.printf("  round %d %-6s %,9.0f records/s, thread CPU %.2f us/record, allocated %,.0f "
                        + "B/record, other CPU %.2f cores, %,d results: %s%n", round, flow ? "flow" : "plain", r.rate(),
                        r.cpuUs(), r.allocBytes(), r.otherCores(),
                        r.results(), check(r));
            }
        }
        double flowRate = median(all.get(true).stream().map(Run::rate).toList());
        double plainRate = median(all.get(false).stream().map(Run::rate).toList());
        double flowCpu = median(all.get(true).stream().map(Run::cpuUs).toList());
        double plainCpu = median(all.get(false).stream().map(Run::cpuUs).toList());
        System.out.printf("%nmedians: flow (FlowTestDriver) %,.0f records/s, %.2f us CPU/record; plain "
                + "(TopologyTestDriver + Processor API) %,.0f records/s, %.2f us CPU/record; flow / plain %.2fx; goal "
                + "flow >= %,.0f records/s: %s%n", flowRate, flowCpu, plainRate, plainCpu, flowRate / plainRate, GOAL,
                flowRate >= GOAL ? "met" : "missed");
        String command = "`benchmarks/run-driver.sh" + (commandLine.isEmpty() ? "" : " " + String.join(" ", commandLine))
                + "`";
        String row = String.format(Locale.ROOT, "| wait-click join on the test driver, %s records (%s impressions + "
                + "clicks), one thread: FlowTestDriver " + (keyed ? "keyed-source pipeline (the join reads both topics)"
                        : "two-hop pipeline (source computations, internal topics, the keyed join)")
                + (watermarkSends.equals(FlowTestDriver.WATERMARK_SENDS_INTERVAL)
                        ? ", watermarks sent once per interval of the driver's clock" : "")
                + " vs hand-written Processor API processor" + (keyed ? "" : " with the same hop (a repartition topic "
                + "per input)") + " on a plain TopologyTestDriver (median of %d interleaved rounds) | %,.0f records/s | %,.0f records/s | %.2fx "
                + "(absolute goal flow >= 100k records/s on one core: %s; thread CPU %.2f vs %.2f us/record; results "
                + "checked: %s) | %s | %s |", compact(n), compact(input.impressions()), runs, flowRate, plainRate,
                flowRate / plainRate, flowRate >= GOAL ? "met" : "missed", flowCpu, plainCpu,
                problems == 0 ? "ok" : problems + " run(s) failed", LocalDate.now(), command);
        System.out.println();
        System.out.println(row);
        if (results != null) {
            ResultsFile.upsertSummaryRows(results, List.of(row));
            System.out.println("updated " + results);
        }
        return problems == 0 ? 0 : 1;
    }

    /**
     * {@code WaitClickData.generate(n, 0.7, START_MS, 200, 42)}'s traffic, impressions and clicks
     * merged in event-time order (a click no later than an impression goes first).
     */
    private static Input input(int n) {
        Random random = new Random(42);
        long[] impressionTs = new long[n];
        List<long[]> clicks = new ArrayList<>(); // (impression index, click ts)
        for (int i = 0; i < n; i++) {
            impressionTs[i] = START_MS + i * 200L;
            if (random.nextDouble() < 0.7) {
                clicks.add(new long[] {i, impressionTs[i] + (long) (random.nextDouble() * 40 * 60_000L)});
            }
        }
        clicks.sort(Comparator.comparingLong(c -> c[1]));
        Map<String, String> expected = new HashMap<>();
        List<In> records = new ArrayList<>(n + clicks.size());
        int c = 0;
        for (int i = 0; i < n; i++) {
            while (c < clicks.size() && clicks.get(c)[1] <= impressionTs[i]) {
                records.add(click(clicks.get(c++)));
            }
            String id = "imp-" + i;
            expected.put(id, "no_click");
            records.add(new In(DriverBenchmarkJoins.IMPRESSIONS, bytes(id), bytes("{\"impression_id\":\"" + id
                    + "\",\"user\":\"user-" + (Math.abs(id.hashCode()) % 1000) + "\",\"ts\":" + impressionTs[i] + "}")));
        }
        while (c < clicks.size()) {
            records.add(click(clicks.get(c++)));
        }
        for (long[] k : clicks) {
            if (DriverBenchmarkJoins.clickCounts(impressionTs[(int) k[0]], k[1])) {
                expected.put("imp-" + k[0], "joined");
            }
        }
        return new Input(records, n, clicks.size(), expected);
    }

    private static In click(long[] c) {
        String id = "imp-" + c[0];
        return new In(DriverBenchmarkJoins.CLICKS, bytes(id), bytes("{\"impression_id\":\"" + id + "\",\"ts\":" + c[1] + "}"));
    }

    /** A tick impression and click, far past every wait: both watermarks move beyond every trigger. */
    private static List<In> ticks(Input input) {
        long ts = START_MS + input.impressions() * 200L + 40 * MIN + DriverBenchmarkJoins.WAIT.toMillis() + 2 * MIN;
        return List.of(new In(DriverBenchmarkJoins.IMPRESSIONS, bytes("tick"),
                        bytes("{\"impression_id\":\"tick\",\"user\":\"tick\",\"ts\":" + ts + "}")),
                new In(DriverBenchmarkJoins.CLICKS, bytes("tick"), bytes("{\"impression_id\":\"tick\",\"ts\":" + ts + "}")));
    }

    private Run flow(Input input) {
        Properties props = new Properties();
        props.put(FlowTestDriver.WATERMARK_SENDS_CONFIG, watermarkSends);
        try (FlowTestDriver driver = FlowTestDriver.create(keyed
                ? DriverBenchmarkJoins.keyedFlowSpec("wcj-bench") : DriverBenchmarkJoins.flowSpec("wcj-bench", 4), props)) {
            Measure m = Measure.start(jfrName == null ? null : jfrDir, jfrName);
            int i = 0;
            for (In r : input.records()) {
                driver.pipeSource(r.topic(), r.key(), r.value(), driver.wallClockTime());
                if (++i % advanceEvery == 0) {
                    driver.advanceWallClockTime(Duration.ofMillis(advanceMs));
                }
            }
            for (In r : ticks(input)) {
                driver.pipeSource(r.topic(), r.key(), r.value(), driver.wallClockTime());
            }
            for (int s = 0; s < drainSteps; s++) {
                driver.advanceWallClockTime(Duration.ofMillis(advanceMs));
            }
            m.stop(input.records().size());
            return m.run(checkResults(driver.readSinkJson(DriverBenchmarkJoins.RESULTS), input));
        }
    }

    private Run plain(Input input) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "wcj-bench-plain");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "plain-test-driver:9092");
        // the test-driver settings FlowTestDriver runs flow with: exactly-once (flow-kafka's only guarantee: a
        // transaction commit per commit), no task idling and no record cache (both only cost time on the driver)
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, "-1");
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        Instant clock = FlowTestDriver.DEFAULT_WALL_CLOCK_START;
        try (TopologyTestDriver driver = new TopologyTestDriver(keyed
                ? DriverBenchmarkJoins.plainTopology() : DriverBenchmarkJoins.plainTwoHopTopology(), props, clock)) {
            Map<String, TestInputTopic<byte[], byte[]>> topics = Map.of(
                    DriverBenchmarkJoins.IMPRESSIONS, driver.createInputTopic(DriverBenchmarkJoins.IMPRESSIONS,
                            new ByteArraySerializer(), new ByteArraySerializer()),
                    DriverBenchmarkJoins.CLICKS, driver.createInputTopic(DriverBenchmarkJoins.CLICKS,
                            new ByteArraySerializer(), new ByteArraySerializer()));
            Duration step = Duration.ofMillis(advanceMs);
            Measure m = Measure.start(jfrName == null ? null : jfrDir, jfrName);
            int i = 0;
            for (In r : input.records()) {
                topics.get(r.topic()).pipeInput(new TestRecord<>(r.key(), r.value(), null, clock));
                if (++i % advanceEvery == 0) {
                    driver.advanceWallClockTime(step);
                    clock = clock.plus(step);
                }
                if (i % 16 == 0) {
                    dropChangelogs(driver); // as FlowTestDriver does every 16 calls
                }
            }
            for (In r : ticks(input)) {
                topics.get(r.topic()).pipeInput(new TestRecord<>(r.key(), r.value(), null, clock));
            }
            for (int s = 0; s < drainSteps; s++) {
                driver.advanceWallClockTime(step);
                clock = clock.plus(step);
            }
            m.stop(input.records().size());
            TestOutputTopic<byte[], byte[]> out = driver.createOutputTopic(DriverBenchmarkJoins.RESULTS,
                    new ByteArrayDeserializer(), new ByteArrayDeserializer());
            List<String> values = out.readValuesToList().stream()
                    .map(v -> new String(v, StandardCharsets.UTF_8)).toList();
            return m.run(checkResults(values, input));
        }
    }

    /**
     * Drops the changelog records the plain driver holds (TopologyTestDriver keeps every record a task writes until
     * it is read; FlowTestDriver drops those of topics a test cannot read, so the plain job does the same).
     */
    private static void dropChangelogs(TopologyTestDriver driver) {
        for (String topic : List.copyOf(driver.producedTopicNames())) {
            if (topic.endsWith("-changelog")) { // repartition records stay, as FlowTestDriver keeps its internal streams
                TestOutputTopic<byte[], byte[]> out = driver.createOutputTopic(topic, new ByteArrayDeserializer(),
                        new ByteArrayDeserializer());
                while (!out.isEmpty()) {
                    out.readRecord();
                }
            }
        }
    }

    /** {count, problem}: the results other than the tick's, checked against the expected ones. */
    private static Object[] checkResults(List<String> json, Input input) {
        Map<String, String> got = new HashMap<>();
        int duplicates = 0;
        for (String s : json) {
            JsonNode r;
            try {
                r = JSON.readTree(s);
            } catch (IOException e) {
                return new Object[] {(long) got.size(), "unreadable result " + s};
            }
            String id = r.get("impression_id").asText();
            if (!id.equals("tick") && got.put(id, r.get("result").asText()) != null) {
                duplicates++;
            }
        }
        long wrong = input.expected().entrySet().stream().filter(e -> !e.getValue().equals(got.get(e.getKey()))).count();
        String problem = null;
        if (got.size() != input.impressions() || duplicates > 0 || wrong > 0) {
            problem = String.format(Locale.ROOT, "%,d results for %,d impressions, %d duplicates, %d differ from the "
                    + "reference", got.size(), input.impressions(), duplicates, wrong);
        }
        return new Object[] {(long) got.size(), problem};
    }

    private static String check(Run r) {
        return r.problem() == null ? "results ok" : r.problem();
    }

    /** Wall clock, this thread's CPU and the other processes' CPU over a timed loop. */
    private static final class Measure {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final jdk.jfr.@org.jspecify.annotations.Nullable Recording jfr;
        private final @org.jspecify.annotations.Nullable Path jfrFile;
        private final CpuSampler sampler = CpuSampler.start();
        private final long cpu0 = THREADS.getCurrentThreadCpuTime();
        private final long alloc0 = allocated();
        private final long wall0 = System.nanoTime();
        private double rate;
        private double cpuUs;
        private double allocBytes;

        private Measure(jdk.jfr.@org.jspecify.annotations.Nullable Recording jfr,
                @org.jspecify.annotations.Nullable Path jfrFile) {
            this.jfr = jfr;
            this.jfrFile = jfrFile;
        }

        /**
         * Starts measuring, and unless {@code jfrDir} is null a JFR recording {@code <jfrDir>/<name>.jfr} of
         * Java execution samples only, every {@code driver.jfr.period.ms} (10) ms. The first recorded run of a JVM
         * is much slower than the others (JFR starting up): profile later rounds.
         */
        static Measure start(@org.jspecify.annotations.Nullable Path jfrDir, String name) {
            if (jfrDir == null) {
                return new Measure(null, null);
            }
            jdk.jfr.Recording r = new jdk.jfr.Recording();
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(Long.getLong("driver.jfr.period.ms", 10)))
                    .withStackTrace();
            r.setName(name);
            r.start();
            return new Measure(r, jfrDir.resolve(name + ".jfr"));
        }

        void stop(int records) {
            long wall = System.nanoTime() - wall0;
            long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
            long alloc = allocated() - alloc0;
            sampler.stop();
            if (jfr != null) {
                jfr.stop();
                try {
                    jfr.dump(jfrFile);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                jfr.close();
                System.out.println("    JFR: " + jfrFile);
            }
            rate = records / (wall / 1e9);
            cpuUs = cpu / 1e3 / records;
            allocBytes = (double) alloc / records;
        }

        /** Bytes this thread allocated so far (HotSpot's counter), or 0 where the JVM does not count them. */
        private static long allocated() {
            return THREADS instanceof com.sun.management.ThreadMXBean t ? t.getCurrentThreadAllocatedBytes() : 0;
        }

        Run run(Object[] check) {
            return new Run(rate, cpuUs, allocBytes, sampler.otherCores(), (Long) check[0], (String) check[1]);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static String compact(long n) {
        if (n >= 1_000_000 && n % 1_000_000 == 0) {
            return n / 1_000_000 + "M";
        }
        if (n >= 10_000) {
            return Math.round(n / 1000.0) + "k";
        }
        return Long.toString(n);
    }
}
