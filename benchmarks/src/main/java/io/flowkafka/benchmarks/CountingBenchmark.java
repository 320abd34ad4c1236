package io.flowkafka.benchmarks;

import io.flowkafka.benchmarks.CountingJobs.Job;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.jspecify.annotations.Nullable;

/**
 * flow-kafka against a hand-written Kafka Streams Processor API app on the same stateful per-key
 * counting job, side by side in one JVM with an in-JVM broker.
 *
 * <p>What it measures, for each job of {@link CountingJobs} ({@code plain}, {@code
 * plain-repartition}, {@code flow}), all {@code exactly_once_v2}, {@code commit.interval.ms=100},
 * one stream thread, RocksDB store with changelog and cache:
 * <ul>
 *   <li><b>throughput</b>: {@code --records} (1M) records over {@code --keys} (100k) keys with
 *       {@code --value-bytes} (100-byte) JSON values are produced to a {@code --partitions}
 *       (4-partition) topic first (a backlog); then the job starts and the clock runs until a
 *       {@code read_committed} consumer has read one output record per input record.
 *       records/s = records / (start to last output). Also reported: the rate from the first
 *       committed output to the last (startup excluded) and the time to the first output.</li>
 *   <li><b>latency</b>: with the job RUNNING, a producer paced at {@code --rate} (20k) records/s
 *       runs {@code --latency-warmup-s} (5 s) of warm-up, then {@code --latency-measure-s}
 *       (20 s) measured; each output's latency is (its read time by the read_committed
 *       consumer) - (its input's send time, the record timestamp both jobs keep); p50/p99 of the
 *       measured records.</li>
 * </ul>
 * Runs interleave: for each of {@code --runs} (3) rounds, each job in turn, each on fresh output
 * topics, application ids and state directories (the throughput input is produced once per
 * round and read by every job of the round). A warm-up round of {@code --warmup-records} (100k)
 * per job runs first and is not reported. Medians over the rounds are printed and written to
 * {@code benchmarks/RESULTS.md} ({@code --results}, or {@code --no-results}). Each job's output is
 * checked to be exactly once: one output per input, each key's last count = its input count.
 *
 * <p>Run it (about 7 minutes with the defaults on a quiet 2-core machine; the build lines are in the
 * script):
 * <pre>
 * cd /work/main &amp;&amp; benchmarks/run.sh --runs 3
 * </pre>
 * which is
 * <pre>
 * mvn -B -q install -DskipTests -pl flow-kafka-core,flow-kafka-testing -am
 * mvn -B -q package -DskipTests -pl benchmarks
 * mvn -B -q -pl benchmarks dependency:copy-dependencies -DoutputDirectory=target/lib -DincludeScope=runtime
 * java -Xms2g -Xmx2g -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
 *     io.flowkafka.benchmarks.CountingBenchmark --runs 3
 * </pre>
 * A quick check: {@code benchmarks/run.sh --runs 1 --records 100000 --no-results}. Profile with
 * {@code --jfr DIR} (one JFR recording per job run) and {@link JfrTopFrames}; see
 * {@code benchmarks/README.md}.
 *
 * <p>Why one class of over 700 lines: it is the run's driver (options, rounds, checks, the printed comparison of
 * each job pair); the jobs, the results file and the measurements already live in their own classes
 * ({@link CountingJobs}, {@code ResultsFile}, the meters), and what is left reads best in one place.
 */
public final class CountingBenchmark {
    /** Anchor figures from BUILD-NOTES (same workload, this kind of machine). */
    static final double ANCHOR_PLAIN_EOS_RATE = 103_000;
    static final long ANCHOR_P50_MS = 75;
    static final long ANCHOR_P99_MS = 146;

    /** -Dbench.streams.* and -Dbench.broker.*: what a run varies. */
    static final BenchVariant VARIANT = new BenchVariant("bench.");

    private final Options o;
    private final String stamp = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    private EmbeddedKafkaCluster cluster;
    private String bootstrap;

    private CountingBenchmark(Options o) {
        this.o = o;
    }

    /** Command-line options; see {@link #usage()}. */
    static final class Options {
        int runs = 3;
        int records = 1_000_000;
        int keys = 100_000;
        int valueBytes = 100;
        int partitions = 4;
        int threads = 1;
        int commitIntervalMs = 100;
        long cacheMaxBytes = -1;
        List<Job> jobs = List.of(Job.PLAIN, Job.PLAIN_REPARTITION, Job.FLOW);
        boolean throughput = true;
        boolean latency = true;
        int rate = 20_000;
        int latencyWarmupS = 5;
        int latencyMeasureS = 20;
        int warmupRecords = 100_000;
        boolean zipf;
        long seed = 42;
        @Nullable Path results = Paths.get("benchmarks", "RESULTS.md");
        @Nullable Path jfrDir;
        int timeoutS = 300;
        String commandLine = "";
    }

    static String usage() {
        return """
                usage: CountingBenchmark [options]
                  --runs N                interleaved rounds (3)
                  --records N             backlog size for throughput (1000000)
                  --keys N                distinct keys (100000)
                  --value-bytes N         JSON value size (100)
                  --partitions N          input/output/internal partitions (4)
                  --threads N             num.stream.threads of every job (1)
                  --commit-interval-ms N  commit.interval.ms of every job (100, the EOS default)
                  --cache-max-bytes N     statestore.cache.max.bytes of every job (Kafka Streams' default, 10 MiB)
                  --jobs a,b              of plain, plain-repartition, flow, flow-outbox, flow-keyed,
                                          flow-prometheus, flow-nometrics (default: the first three)
                  --modes a,b             of throughput, latency (both)
                  --rate N                paced records/s for latency (20000)
                  --latency-warmup-s N    paced warm-up, not measured (5)
                  --latency-measure-s N   paced measured seconds (20)
                  --warmup-records N      unreported warm-up run per job, 0 for none (100000)
                  --skew uniform|zipf     key distribution (uniform, as the anchor; zipf: exponent 0.99)
                  --seed N                (42)
                  --results FILE          Markdown file to update (benchmarks/RESULTS.md)
                  --no-results            print only
                  --jfr DIR               one JFR recording (profile settings) per job run, in DIR
                  --timeout-s N           bound of one run (300)
                system properties (in JAVA_OPTS):
                  -Dbench.streams.<property>=<value>   a Streams or client property of every job (flow.* ones of
                                          the flow-kafka jobs only)
                  -Dbench.broker.<key>=<value>   a setting of the in-JVM broker, e.g.
                                          -Dbench.broker.add.partitions.to.txn.retry.backoff.max.ms=1000
                  -Dflow.embedded.transaction.version=1|2   the broker's transaction version (2, Kafka 4.4's)
                """;
    }

    static Options parse(String[] args) {
        Options o = new Options();
        o.commandLine = String.join(" ", args);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(usage());
                System.exit(0);
            }
            if (a.equals("--no-results")) {
                o.results = null;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value\n" + usage());
            }
            String v = args[++i];
            switch (a) {
                case "--runs" -> o.runs = Integer.parseInt(v);
                case "--records" -> o.records = Integer.parseInt(v);
                case "--keys" -> o.keys = Integer.parseInt(v);
                case "--value-bytes" -> o.valueBytes = Integer.parseInt(v);
                case "--partitions" -> o.partitions = Integer.parseInt(v);
                case "--threads" -> o.threads = Integer.parseInt(v);
                case "--commit-interval-ms" -> o.commitIntervalMs = Integer.parseInt(v);
                case "--cache-max-bytes" -> o.cacheMaxBytes = Long.parseLong(v);
                case "--jobs" -> o.jobs = Arrays.stream(v.split(",")).map(String::trim).map(Job::parse).toList();
                case "--modes" -> {
                    List<String> m = Arrays.stream(v.split(",")).map(String::trim).toList();
                    for (String s : m) {
                        if (!s.equals("throughput") && !s.equals("latency")) {
                            throw new IllegalArgumentException("unknown mode '" + s + "': use throughput, latency");
                        }
                    }
                    o.throughput = m.contains("throughput");
                    o.latency = m.contains("latency");
                }
                case "--rate" -> o.rate = Integer.parseInt(v);
                case "--latency-warmup-s" -> o.latencyWarmupS = Integer.parseInt(v);
                case "--latency-measure-s" -> o.latencyMeasureS = Integer.parseInt(v);
                case "--warmup-records" -> o.warmupRecords = Integer.parseInt(v);
                case "--skew" -> {
                    if (!v.equals("uniform") && !v.equals("zipf")) {
                        throw new IllegalArgumentException("--skew must be uniform or zipf");
                    }
                    o.zipf = v.equals("zipf");
                }
                case "--seed" -> o.seed = Long.parseLong(v);
                case "--results" -> o.results = Paths.get(v);
                case "--jfr" -> o.jfrDir = Paths.get(v);
                case "--timeout-s" -> o.timeoutS = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown option " + a + "\n" + usage());
            }
        }
        return o;
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        if (System.getProperty("org.slf4j.simpleLogger.log.org.apache.kafka") == null) {
            // Kafka's warnings here are expected noise (temp state.dir, repartition topic not yet created)
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        }
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        new CountingBenchmark(o).run();
        System.exit(0);
    }

    /** One throughput run. */
    record Throughput(Job job, int round, double seconds, double rate, double steadyRate, double firstOutputS,
            double otherCores, AppCpu cpu, long changelogRecords, TransactionCounts txn, String notes,
            @Nullable String problem) {
    }

    /**
     * CPU seconds used during a throughput run: by the job's stream thread(s), by all of the job's
     * threads (stream threads, their producers' network threads, admin, heartbeat), and by the
     * whole JVM (broker, output meter and JIT included).
     */
    record AppCpu(double streamThreads, double appThreads, double jvm) {
        static long jvmNanos() {
            return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                    .getOperatingSystemMXBean()).getProcessCpuTime();
        }

        /** CPU nanos so far of the live threads whose name contains {@code id}: {stream threads, all}. */
        static long[] threadNanos(String id) {
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long stream = 0;
            long all = 0;
            for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
                if (ti == null || !ti.getThreadName().contains(id)) {
                    continue;
                }
                long c = mx.getThreadCpuTime(ti.getThreadId());
                if (c > 0) {
                    all += c;
                    if (ti.getThreadName().matches(".*-StreamThread-[0-9]+")) {
                        stream += c;
                    }
                }
            }
            return new long[] {stream, all};
        }
    }

    /** One latency run. */
    record Latency(Job job, int round, long measured, long p50, long p99, long p999, long max, long producerLagMs,
            double otherCores, String notes, @Nullable String problem) {
    }

    private void run() throws Exception {
        Files.createDirectories(Paths.get(System.getProperty("java.io.tmpdir")));
        if (o.jfrDir != null) {
            Files.createDirectories(o.jfrDir);
        }
        String loadBefore = CpuSampler.loadAverage();
        System.out.printf("CountingBenchmark: %s%nload average before: %s; %d cores%n", describe(), loadBefore,
                Runtime.getRuntime().availableProcessors());
        long started = System.nanoTime();
        cluster = EmbeddedKafkaCluster.start(1, VARIANT.brokerConfig());
        bootstrap = cluster.bootstrapServers();
        Workload workload = new Workload(o.keys, o.valueBytes, o.zipf, o.seed);
        int[] sequence = workload.draw(o.records);
        int[] expected = workload.expectedCounts(sequence);
        List<Throughput> throughputs = new ArrayList<>();
        List<Latency> latencies = new ArrayList<>();
        try {
            if (o.warmupRecords > 0) {
                int[] warm = Arrays.copyOf(sequence, Math.min(o.warmupRecords, sequence.length));
                String input = "bench-warmup-in-" + stamp;
                cluster.createTopic(input, o.partitions);
                workload.produceBacklog(bootstrap, input, warm);
                for (Job job : o.jobs) {
                    Throughput t = throughput(job, 0, input, warm.length, workload.expectedCounts(warm));
                    System.out.printf("  warm-up %-17s %,9.0f records/s%s%n", job.label, t.rate(),
                            t.problem() == null ? "" : "  PROBLEM: " + t.problem());
                }
                deleteTopics(input);
            }
            for (int round = 1; round <= o.runs; round++) {
                if (o.throughput) {
                    String input = "bench-in-r" + round + "-" + stamp;
                    cluster.createTopic(input, o.partitions);
                    long nanos = workload.produceBacklog(bootstrap, input, sequence);
                    System.out.printf("round %d: produced %,d records in %.1f s%n", round, o.records, nanos / 1e9);
                    for (Job job : o.jobs) {
                        Throughput t = throughput(job, round, input, o.records, expected);
                        throughputs.add(t);
                        System.out.printf("  throughput %-17s %,9.0f records/s  (%.2f s; %,.0f records/s after the "
                                        + "first output at %.2f s; CPU s: stream thread %.1f, job %.1f, JVM %.1f; "
                                        + "changelog records %,d; other load %.2f cores)%s%n", job.label, t.rate(),
                                t.seconds(), t.steadyRate(), t.firstOutputS(), t.cpu().streamThreads(),
                                t.cpu().appThreads(), t.cpu().jvm(), t.changelogRecords(), t.otherCores(),
                                t.problem() == null ? "" : "  PROBLEM: " + t.problem());
                        System.out.println("    " + t.txn().describe());
                        if (!t.notes().isEmpty()) {
                            System.out.println("    note: " + t.notes());
                        }
                    }
                    deleteTopics(input);
                }
                if (o.latency) {
                    for (Job job : o.jobs) {
                        Latency l = latency(job, round, workload);
                        latencies.add(l);
                        System.out.printf("  latency    %-17s p50 %4d ms  p99 %4d ms  p99.9 %4d ms  max %5d ms  (%,d "
                                        + "records; producer lag max %d ms; other load %.2f cores)%s%n", job.label,
                                l.p50(), l.p99(), l.p999(), l.max(), l.measured(), l.producerLagMs(), l.otherCores(),
                                l.problem() == null ? "" : "  PROBLEM: " + l.problem());
                        if (!l.notes().isEmpty()) {
                            System.out.println("    note: " + l.notes());
                        }
                    }
                }
            }
        } finally {
            cluster.close();
        }
        String loadAfter = CpuSampler.loadAverage();
        double minutes = (System.nanoTime() - started) / 60e9;
        Report report = new Report(o, describe(), throughputs, latencies, loadBefore, loadAfter, minutes);
        System.out.println();
        System.out.println(report.consoleTable());
        if (o.results != null) {
            ResultsFile.update(o.results, report, LocalDate.now().toString());
            System.out.println("updated " + o.results.toAbsolutePath().normalize());
        }
    }

    private String describe() {
        return String.format(Locale.ROOT, "%,d records, %,d keys (%s), %d-byte values, %d partitions, "
                        + "exactly_once_v2, commit.interval.ms=%d, num.stream.threads=%d, one JVM with the broker; "
                        + "%s%sjobs %s; %d round(s); %s; Java %s", o.records, o.keys, o.zipf ? "zipf 0.99" : "uniform",
                o.valueBytes, o.partitions, o.commitIntervalMs, o.threads,
                o.cacheMaxBytes >= 0 ? "statestore.cache.max.bytes=" + o.cacheMaxBytes + "; " : "",
                VARIANT.describe(), o.jobs.stream().map(j -> j.label).toList(),
                o.runs, System.getProperty("bench.built.from", "flow-kafka version unknown"),
                System.getProperty("java.version"));
    }

    private Properties streamsProps(Path stateDir, Job job) {
        Properties p = cluster.clientProperties();
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, String.valueOf(o.commitIntervalMs));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, String.valueOf(o.threads));
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        // the producer batch size and compression flow-kafka sets by default (FlowRuntime), given to every job
        // alike, so the plain apps measure Kafka Streams writing as flow-kafka does, not Kafka's producer
        // defaults (16 KiB batches, uncompressed)
        // -Dbench.producer.defaults=kafka: every job on Kafka's producer defaults instead (an A/B of the settings)
        // -Dbench.producer.defaults=flow: the flow-kafka jobs get none of the two, so FlowRuntime's own defaults
        // apply (its batch size fitted to the topology at start; the plain apps keep 256 KiB)
        String defaults = System.getProperty("bench.producer.defaults", "");
        boolean kafkaDefaults = "kafka".equals(defaults);
        if (!("flow".equals(defaults) && job.label.startsWith("flow"))) {
            p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), kafkaDefaults ? "16384" : "262144");
            p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), kafkaDefaults ? "none" : "lz4");
        }
        if (o.cacheMaxBytes >= 0) {
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, String.valueOf(o.cacheMaxBytes));
        }
        VARIANT.applyStreams(p, job.label.startsWith("flow")); // e.g. -Dbench.streams.producer.linger.ms=5
        return p;
    }

    private Throughput throughput(Job job, int round, String input, int records, int[] expected) throws Exception {
        String id = "cnt-" + job.label + "-t" + round + "-" + stamp;
        String output = id + "-out";
        cluster.createTopic(output, o.partitions);
        Path stateDir = tempDirDeletedAtExit("bench-state-");
        settle();
        String problem = null;
        long start;
        long end;
        long first;
        CpuSampler cpu;
        AppCpu appCpu;
        TransactionCounts txn;
        TransactionCounts txnBefore = TransactionCounts.snapshot(id);
        BrokerRequests brokerBefore = BrokerRequests.snapshot();
        BrokerRequests broker;
        try (OutputMeter meter = new OutputMeter(bootstrap, output, o.partitions, false);
                JfrWindow jfr = JfrWindow.start(o.jfrDir, id)) {
            cpu = CpuSampler.start();
            long jvmCpuStart = AppCpu.jvmNanos();
            start = System.nanoTime();
            try (CountingJobs.Running app = CountingJobs.start(job, id, input, output, o.partitions,
                    streamsProps(stateDir, job))) {
                end = meter.awaitCount(records, Duration.ofSeconds(o.timeoutS));
                cpu.stop();
                txn = TransactionCounts.snapshot(id).since(txnBefore); // before the job's clients close
                broker = BrokerRequests.snapshot().since(brokerBefore);
                long[] threads = AppCpu.threadNanos(id); // the job's threads start with the run
                appCpu = new AppCpu(threads[0] / 1e9, threads[1] / 1e9, (AppCpu.jvmNanos() - jvmCpuStart) / 1e9);
                first = meter.firstNanos();
                if (end < 0) {
                    problem = "timed out after " + o.timeoutS + " s with " + meter.count() + " of " + records
                            + " outputs";
                    end = System.nanoTime();
                }
            }
        }
        if (problem == null) {
            problem = OutputMeter.verify(bootstrap, output, o.partitions, expected, records, Duration.ofSeconds(120));
        }
        String notes = CountingJobs.drainStartNotes();
        Map<String, Long> written = topicEndOffsets(id);
        long changelog = written.entrySet().stream().filter(e -> e.getKey().endsWith("-changelog"))
                .mapToLong(Map.Entry::getValue).sum();
        System.out.println("    topics written (end offsets: records + transaction markers): " + written);
        System.out.println("    " + broker.describe());
        System.out.println("    bytes appended by topic: " + broker.bytesIn(id));
        deleteTopicsWithPrefix(id);
        deleteRecursively(stateDir);
        double seconds = (end - start) / 1e9;
        double steady = end > first && first > 0 ? records / ((end - first) / 1e9) : Double.NaN;
        return new Throughput(job, round, seconds, records / seconds, steady, (first - start) / 1e9,
                cpu.otherCores(), appCpu, changelog, txn, notes, problem);
    }

    private Latency latency(Job job, int round, Workload workload) throws Exception {
        String id = "cnt-" + job.label + "-l" + round + "-" + stamp;
        String input = id + "-in";
        String output = id + "-out";
        cluster.createTopic(input, o.partitions);
        cluster.createTopic(output, o.partitions);
        Path stateDir = tempDirDeletedAtExit("bench-state-");
        settle();
        String problem = null;
        long[] sorted;
        long lag;
        CpuSampler cpu;
        try (OutputMeter meter = new OutputMeter(bootstrap, output, o.partitions, true);
                CountingJobs.Running app = CountingJobs.start(job, id, input, output, o.partitions,
                        streamsProps(stateDir, job))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!app.isRunning() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            try (JfrWindow jfr = JfrWindow.start(o.jfrDir, id)) {
                cpu = CpuSampler.start();
                Workload.Paced paced = workload.new Paced(bootstrap, input, o.rate, o.latencyWarmupS,
                        o.latencyMeasureS).start();
                paced.await();
                if (paced.failure() != null) {
                    throw new IllegalStateException("paced producer failed", paced.failure());
                }
                long sent = paced.sent();
                if (meter.awaitCount(sent, Duration.ofSeconds(60)) < 0) {
                    problem = "only " + meter.count() + " of " + sent + " outputs within 60 s after the last send";
                }
                cpu.stop();
                sorted = meter.sortedLatencies(paced.measureFromMs());
                lag = paced.maxLagMs();
                if (problem == null && sorted.length != paced.measuredSent()) {
                    problem = "measured " + sorted.length + " outputs for " + paced.measuredSent() + " inputs";
                }
            }
        }
        deleteTopicsWithPrefix(id);
        deleteRecursively(stateDir);
        return new Latency(job, round, sorted.length, OutputMeter.quantile(sorted, 0.50),
                OutputMeter.quantile(sorted, 0.99), OutputMeter.quantile(sorted, 0.999),
                sorted.length == 0 ? -1 : sorted[sorted.length - 1], lag, cpu.otherCores(),
                CountingJobs.drainStartNotes(), problem);
    }

    /** Lets the previous run's topic deletions and garbage settle before the next run. */
    private static void settle() throws InterruptedException {
        System.gc();
        Thread.sleep(1000);
    }

    private void deleteTopics(String... topics) throws Exception {
        cluster.admin().deleteTopics(List.of(topics)).all().get(60, TimeUnit.SECONDS);
    }

    /**
     * The end offsets of every topic the job wrote (its name starts with the job's id; the input and output
     * too), summed over partitions, largest first: records written plus one transaction marker per partition
     * and commit.
     */
    private Map<String, Long> topicEndOffsets(String prefix) throws Exception {
        Admin admin = cluster.admin();
        List<String> mine = admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
                .filter(t -> t.startsWith(prefix)).toList();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        admin.describeTopics(mine).allTopicNames().get(60, TimeUnit.SECONDS).forEach((name, d) ->
                d.partitions().forEach(p -> request.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
        Map<String, Long> sums = new HashMap<>();
        admin.listOffsets(request).all().get(60, TimeUnit.SECONDS)
                .forEach((tp, info) -> sums.merge(tp.topic().substring(prefix.length()), info.offset(), Long::sum));
        Map<String, Long> sorted = new LinkedHashMap<>();
        sums.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    private void deleteTopicsWithPrefix(String prefix) throws Exception {
        Admin admin = cluster.admin();
        List<String> mine = admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
                .filter(t -> t.startsWith(prefix)).toList();
        if (!mine.isEmpty()) {
            admin.deleteTopics(mine).all().get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * A new temporary directory (state of a benchmark's runtime or child JVM) that this JVM deletes when it exits,
     * also when a run fails or is interrupted.
     */
    static Path tempDirDeletedAtExit(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(prefix);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (Files.exists(dir)) {
                deleteRecursively(dir);
            }
        }, "delete " + dir));
        return dir;
    }

    static void deleteRecursively(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A JFR recording (profile settings) over one job run, dumped to {@code <dir>/<name>.jfr}; no-op without a dir. */
    static final class JfrWindow implements AutoCloseable {
        private final @Nullable Recording recording;
        private final @Nullable Path file;

        private JfrWindow(@Nullable Recording recording, @Nullable Path file) {
            this.recording = recording;
            this.file = file;
        }

        static JfrWindow start(@Nullable Path dir, String name) throws Exception {
            if (dir == null) {
                return new JfrWindow(null, null);
            }
            Recording r = new Recording(Configuration.getConfiguration("profile"));
            // profile's 10/20 ms give too few samples; one period for both so that Java and native
            // (RocksDB JNI) samples weigh the same
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(2));
            r.enable("jdk.NativeMethodSample").withPeriod(Duration.ofMillis(2));
            r.setName(name);
            r.start();
            return new JfrWindow(r, dir.resolve(name + ".jfr"));
        }

        @Override
        public void close() throws IOException {
            if (recording != null) {
                recording.stop();
                recording.dump(file);
                recording.close();
                System.out.println("    JFR: " + file);
            }
        }
    }

    /** Medians and the tables of one invocation. */
    static final class Report {
        final Options o;
        final String description;
        final List<Throughput> throughputs;
        final List<Latency> latencies;
        final String loadBefore;
        final String loadAfter;
        final double minutes;

        Report(Options o, String description, List<Throughput> throughputs, List<Latency> latencies,
                String loadBefore, String loadAfter, double minutes) {
            this.o = o;
            this.description = description;
            this.throughputs = throughputs;
            this.latencies = latencies;
            this.loadBefore = loadBefore;
            this.loadAfter = loadAfter;
            this.minutes = minutes;
        }

        static double median(double[] v) {
            if (v.length == 0) {
                return Double.NaN;
            }
            double[] s = v.clone();
            Arrays.sort(s);
            return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        }

        double medianRate(Job job) {
            return median(throughputs.stream().filter(t -> t.job() == job).mapToDouble(Throughput::rate).toArray());
        }

        double medianSteady(Job job) {
            return median(throughputs.stream().filter(t -> t.job() == job).mapToDouble(Throughput::steadyRate)
                    .toArray());
        }

        double medianFirst(Job job) {
            return median(throughputs.stream().filter(t -> t.job() == job).mapToDouble(Throughput::firstOutputS)
                    .toArray());
        }

        /** Median stream-thread CPU microseconds per record. */
        double medianStreamCpuUs(Job job) {
            return median(throughputs.stream().filter(t -> t.job() == job)
                    .mapToDouble(t -> t.cpu().streamThreads() * 1e6 / o.records).toArray());
        }

        /** Median whole-JVM CPU microseconds per record (broker and meter included). */
        double medianJvmCpuUs(Job job) {
            return median(throughputs.stream().filter(t -> t.job() == job)
                    .mapToDouble(t -> t.cpu().jvm() * 1e6 / o.records).toArray());
        }

        double medianP50(Job job) {
            return median(latencies.stream().filter(l -> l.job() == job).mapToDouble(Latency::p50).toArray());
        }

        double medianP99(Job job) {
            return median(latencies.stream().filter(l -> l.job() == job).mapToDouble(Latency::p99).toArray());
        }

        double medianP999(Job job) {
            return median(latencies.stream().filter(l -> l.job() == job).mapToDouble(Latency::p999).toArray());
        }

        boolean has(Job job) {
            return o.jobs.contains(job);
        }

        long problems() {
            return throughputs.stream().filter(t -> t.problem() != null).count()
                    + latencies.stream().filter(l -> l.problem() != null).count();
        }

        double otherCoresMedian() {
            double[] all = Stream.concat(throughputs.stream().map(Throughput::otherCores),
                    latencies.stream().map(Latency::otherCores)).mapToDouble(Double::doubleValue).toArray();
            return median(all);
        }

        double otherCoresMax() {
            return Stream.concat(throughputs.stream().map(Throughput::otherCores),
                    latencies.stream().map(Latency::otherCores)).mapToDouble(Double::doubleValue).max().orElse(0);
        }

        String consoleTable() {
            StringBuilder b = new StringBuilder();
            b.append(description).append('\n');
            b.append(String.format("%-18s %12s %13s %11s %12s %10s %7s %7s %7s%n", "job (median)", "records/s",
                    "after 1st out", "1st out (s)", "stream us/rec", "JVM us/rec", "p50 ms", "p99 ms", "p99.9"));
            for (Job job : o.jobs) {
                b.append(String.format("%-18s %,12.0f %,13.0f %11.2f %12.1f %10.1f %7.0f %7.0f %7.0f%n", job.label,
                        medianRate(job), medianSteady(job), medianFirst(job), medianStreamCpuUs(job),
                        medianJvmCpuUs(job), medianP50(job), medianP99(job), medianP999(job)));
            }
            List<String> vs = new java.util.ArrayList<>();
            for (Job flow : List.of(Job.FLOW, Job.FLOW_KEYED)) {
                for (Job base : List.of(Job.PLAIN, Job.PLAIN_REPARTITION)) {
                    if (has(base) && has(flow)) {
                        vs.add(String.format(Locale.ROOT, "%s / %s: throughput %.2fx (target >= 0.9), p99 %.2fx "
                                        + "(target <= 1.2)", flow.label, base.label, medianRate(flow) / medianRate(base),
                                medianP99(flow) / medianP99(base)));
                    }
                }
            }
            if (has(Job.FLOW_OUTBOX) && has(Job.FLOW)) {
                // the outbox job's latency: input produce -> its record committed on the target, read read_committed
                vs.add(String.format(Locale.ROOT, "flow-outbox / flow: throughput %.2fx (target >= 0.8); latency "
                                + "input -> committed on the target p50 %.0f ms, p99 %.0f ms (flow: %.0f, %.0f ms)",
                        medianRate(Job.FLOW_OUTBOX) / medianRate(Job.FLOW), medianP50(Job.FLOW_OUTBOX),
                        medianP99(Job.FLOW_OUTBOX), medianP50(Job.FLOW), medianP99(Job.FLOW)));
            }
            vs.forEach(v -> b.append(v).append('\n'));
            for (Job job : o.jobs) {
                List<TransactionCounts> runs = throughputs.stream().filter(t -> t.job() == job)
                        .map(Throughput::txn).toList();
                if (!runs.isEmpty()) {
                    b.append(job.label).append(", median per throughput run: ").append(TransactionCounts.medians(runs))
                            .append('\n');
                }
            }
            b.append(String.format(Locale.ROOT, "load average before %s, after %s; CPU used by other processes "
                    + "during runs: median %.2f, max %.2f cores; %d problem(s); %.1f min%n", loadBefore, loadAfter,
                    otherCoresMedian(), otherCoresMax(), problems(), minutes));
            return b.toString();
        }
    }
}
