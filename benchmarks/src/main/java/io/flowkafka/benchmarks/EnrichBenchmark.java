package io.flowkafka.benchmarks;

import io.flowkafka.benchmarks.EnrichJobs.Job;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Issue 24's enrich benchmark: an enrich job's throughput with a flow-kafka {@code external_state_joiner} vs
 * the same join written as a plain Kafka Streams {@code GlobalKTable} join (and, when asked for, a
 * co-partitioned {@code KTable} join), side by side in one run on one in-JVM broker (target >= 0.9x).
 *
 * <p>This JVM runs the broker, writes the input once and measures; each job runs in a JVM of its own
 * ({@link EnrichJobs#main}, same heap). The input: a reference topic of {@code --keys} rows (Avro binary,
 * keyed by {@code k<i>}, compacted) and an events topic of {@code --events} JSON events over those keys
 * (uniform, seeded), both {@code --partitions} partitions. When a flow-kafka job runs, the loader pipeline
 * ({@link EnrichJobs#loaderSpec}, a manager) first copies the reference into the table topic in the runtime's
 * format, in a job JVM of its own, before any measured run; the row count of the table topic is checked.
 *
 * <p>Per run: a fresh output topic and application id; the clock starts at the job JVM's {@code T0} (just
 * before it creates its runtime or KafkaStreams, so the global store's restore, topic creation and the
 * first rebalance count) and stops when a {@code read_committed} meter has read an output for every event.
 * Also reported: the rate while the outputs went from 20% to 90% (the job once running, without its start and
 * its closing commit), the job JVM's CPU per event, and the CPU other processes used. Every output is checked
 * (one per event, each enriched with its key's row). A warm-up run per job on {@code --warmup} events of their
 * own comes first (not reported), then {@code --runs} rounds alternating the job order; the medians go to
 * summary rows of {@code RESULTS.md} via {@link ResultsFile#upsertSummaryRows}.
 *
 * <p>Run: {@code benchmarks/run-enrich.sh} (builds, then runs this class; options: {@code --help}).
 */
public final class EnrichBenchmark {
    /** The share of the input between 20% and 90% of the outputs ({@link Run#steadyRate}). */
    static final double STEADY_SHARE = 0.7;

    private int keys = 100_000;
    private int events = 1_000_000;
    private int valueBytes = 100;
    private int partitions = 4;
    private int runs = 3;
    private int warmup = 50_000;
    private int threads = 1;
    private long commitMs = 100;
    private long seed = 42;
    private String jobHeap = "1g";
    private long timeoutS = 600;
    private List<Job> jobs = List.of(Job.FLOW, Job.PLAIN_GLOBAL);
    private List<String> jobJvmOpts = List.of();
    /** The flow jobs' joiner {@code cache.ttl}; null: none (every lookup reads the table, Flow's default). */
    private @Nullable Duration cacheTtl;
    private @Nullable Path results = Paths.get("benchmarks/RESULTS.md");
    private @Nullable Path workDir;
    private final List<String> commandLine = new ArrayList<>();
    private final String stamp = Long.toString(System.currentTimeMillis() % 10_000_000, 36);
    private EmbeddedKafkaCluster cluster;
    private String referenceTopic;
    private String tableTopic = "-";
    private final Set<String> keep = new HashSet<>();
    private final List<Process> children = new CopyOnWriteArrayList<>();

    /** One measured (or warm-up) run. */
    record Run(Job job, int round, long events, double seconds, double launchToT0, double toRunning,
            double firstOutput, double steadySeconds, double jobCpuS, double driverCpuS, double otherCores,
            String finished, EnrichMeter.Check check) {
        double rate() {
            return events / seconds;
        }

        /** Events/s while the outputs went from 20% to 90%: the job once running. NaN when unknown. */
        double steadyRate() {
            return steadySeconds > 0 ? events * STEADY_SHARE / steadySeconds : Double.NaN;
        }

        double cpuUsPerEvent() {
            return jobCpuS * 1e6 / events;
        }

        String describe() {
            return String.format(Locale.ROOT, "%,9.0f events/s (%.2f s from start; JVM launch to start %.2f s; running "
                            + "at %.2f s; first output at %.2f s; %,.0f events/s from 20%% to 90%% of the outputs; CPU s: "
                            + "job JVM %.1f = %.1f us/event, broker JVM %.1f; other processes %.2f cores; %s) %s", rate(),
                    seconds, launchToT0, toRunning, firstOutput, steadyRate(), jobCpuS, cpuUsPerEvent(), driverCpuS,
                    otherCores, finished, check);
        }
    }

    /** An events topic written once and read by every run. */
    record Input(String topic, int events) {
    }

    public static void main(String[] args) throws Exception {
        EnrichBenchmark b = new EnrichBenchmark();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("""
                        options (defaults in parentheses):
                          --events N            events in the measured backlog (1000000)
                          --keys N              rows of the reference table; events draw their keys uniformly (100000)
                          --value-bytes N       size of an event's JSON value (100)
                          --partitions N        partitions of the reference, events and output topics (4)
                          --runs N              interleaved rounds, medians reported (3)
                          --warmup N            events of the unreported warm-up run per job, 0 for none (50000)
                          --threads N           num.stream.threads of every job (1)
                          --commit-interval-ms N commit.interval.ms of every job (100, the exactly-once default)
                          --seed N              seed of the events' keys (42)
                          --job-heap SIZE       -Xms and -Xmx of each job JVM (1g)
                          --job-jvm-opts "OPTS" extra options of every job JVM (JFR, log levels;
                                                -Denrich.streams.K=V sets Kafka Streams property K of every job)
                          --cache-ttl ISO       the flow jobs' joiner cache.ttl, e.g. PT1M (none: every lookup
                                                reads the table, Flow's default)
                          --jobs LIST           of flow, flow-two-hop, plain-global, plain-table (flow,plain-global)
                          --timeout-s N         bound on one run (600)
                          --work-dir DIR        state and job logs (a new temp directory)
                          --results FILE | --no-results   where to write the summary rows (benchmarks/RESULTS.md)""");
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
            if (!a.equals("--work-dir")) {
                b.commandLine.add(a);
                b.commandLine.add(v.contains(" ") ? "\"" + v + "\"" : v);
            }
            switch (a) {
                case "--events" -> b.events = Integer.parseInt(v);
                case "--keys" -> b.keys = Integer.parseInt(v);
                case "--value-bytes" -> b.valueBytes = Integer.parseInt(v);
                case "--partitions" -> b.partitions = Integer.parseInt(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--warmup" -> b.warmup = Integer.parseInt(v);
                case "--threads" -> b.threads = Integer.parseInt(v);
                case "--commit-interval-ms" -> b.commitMs = Long.parseLong(v);
                case "--seed" -> b.seed = Long.parseLong(v);
                case "--job-heap" -> b.jobHeap = v;
                case "--job-jvm-opts" -> b.jobJvmOpts = v.isBlank() ? List.of() : List.of(v.trim().split("\\s+"));
                case "--cache-ttl" -> b.cacheTtl = Duration.parse(v);
                case "--jobs" -> b.jobs = Stream.of(v.split(",")).map(s -> Job.parse(s.trim())).distinct().toList();
                case "--timeout-s" -> b.timeoutS = Long.parseLong(v);
                case "--work-dir" -> b.workDir = Paths.get(v);
                case "--results" -> b.results = Paths.get(v);
                default -> throw new IllegalArgumentException("unknown option " + a + " (see --help)");
            }
        }
        System.exit(b.run());
    }

    private int run() throws Exception {
        long started = System.nanoTime();
        if (workDir == null) {
            workDir = Files.createTempDirectory("enrich-bench-");
        }
        Files.createDirectories(workDir);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));
        String loadBefore = CpuSampler.loadAverage();
        System.out.printf(Locale.ROOT, "EnrichBenchmark: %,d events over %,d reference keys, %d-byte events, %d "
                        + "partitions, %d round(s) of %s, %d stream thread(s), commit.interval.ms %d, joiner cache.ttl %s, job "
                        + "heap %s; work dir %s; load average %s; %s; Java %s%n", events, keys, valueBytes, partitions,
                runs, jobs.stream().map(j -> j.label).toList(), threads, commitMs, cacheTtl == null ? "none" : cacheTtl,
                jobHeap, workDir, loadBefore,
                System.getProperty("bench.built.from", "build unknown"), System.getProperty("java.version"));
        cluster = EmbeddedKafkaCluster.start();
        List<Run> all = new ArrayList<>();
        try {
            writeReference();
            if (jobs.stream().anyMatch(Job::isFlow)) {
                loadTable();
            }
            Input warm = warmup > 0 ? input("warm", warmup) : null;
            Input in = input("main", events);
            if (warm != null) {
                for (Job job : jobs) {
                    Run r = runJob(job, 0, warm);
                    System.out.printf("  warm-up %-13s %s%n", job.label, r.describe());
                }
            }
            for (int round = 1; round <= runs; round++) {
                List<Job> order = new ArrayList<>(jobs);
                if (round % 2 == 0) {
                    Collections.reverse(order); // alternate, so that no job always runs first
                }
                for (Job job : order) {
                    Run r = runJob(job, round, in);
                    all.add(r);
                    System.out.printf("  round %d %-13s %s%n", round, job.label, r.describe());
                }
            }
        } finally {
            cluster.close();
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        System.out.println();
        System.out.printf(Locale.ROOT, "Medians over %d round(s), %,d events over %,d keys; took %.1f min; load average "
                + "before %s, after %s:%n", runs, events, keys, minutes, loadBefore, CpuSampler.loadAverage());
        System.out.println("| job | events/s (median) | seconds from start | JVM launch to start (s) | running at (s) | "
                + "first output (s) | events/s from 20% to 90% of the outputs | job JVM CPU us/event | broker JVM CPU s | "
                + "other processes (cores) | checks |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
        for (Job job : jobs) {
            List<Run> rs = of(all, job);
            long bad = rs.stream().filter(r -> !r.check().ok()).count();
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f | %.2f | %.2f | %.2f | %,.0f | %.1f | %.1f | %.2f | %d of %d "
                            + "ok |%n", job.label, median(rs, Run::rate), median(rs, Run::seconds),
                    median(rs, Run::launchToT0), median(rs, Run::toRunning), median(rs, Run::firstOutput),
                    median(rs, Run::steadyRate), median(rs, Run::cpuUsPerEvent), median(rs, Run::driverCpuS),
                    median(rs, Run::otherCores), rs.size() - bad, rs.size());
        }
        long problems = all.stream().filter(r -> !r.check().ok() || !r.finished().equals("ok")).count();
        List<String> rows = rows(all, problems);
        System.out.println();
        rows.forEach(System.out::println);
        if (results != null && !rows.isEmpty()) {
            ResultsFile.upsertSummaryRows(results, rows);
            System.out.println("updated " + results);
        }
        return problems == 0 ? 0 : 1;
    }

    private List<String> rows(List<Run> all, long problems) {
        List<String> rows = new ArrayList<>();
        if (runs <= 0) {
            return rows;
        }
        String command = "`benchmarks/run-enrich.sh" + (commandLine.isEmpty() ? "" : " " + String.join(" ", commandLine))
                + "`";
        String checked = problems == 0 ? "; outputs checked: ok" : "; check problems in " + problems + " run(s)";
        String setting = String.format(Locale.ROOT, "%s-event backlog (%d-byte JSON) over a %s-row reference table "
                        + "(Avro rows), %d partitions, each job in its own JVM (heap %s), exactly_once_v2, "
                        + "commit.interval.ms %d, %d stream thread%s", compact(events), valueBytes, compact(keys), partitions,
                jobHeap, commitMs, threads, threads == 1 ? "" : "s");
        for (Job flow : List.of(Job.FLOW, Job.FLOW_TWO_HOP)) {
            for (Job base : List.of(Job.PLAIN_GLOBAL, Job.PLAIN_TABLE)) {
                if (!jobs.contains(flow) || !jobs.contains(base)) {
                    continue;
                }
                boolean target = flow == Job.FLOW && base == Job.PLAIN_GLOBAL;
                String joiner = "an external_state_joiner (" + (cacheTtl == null ? "no cache" : "cache.ttl " + cacheTtl)
                        + ")";
                String what = (flow == Job.FLOW ? "flow-kafka Transform with " + joiner + " (global store over the "
                        + "table topic; keyed source, one sub-topology)" : "flow-kafka Flow-shaped pipeline (Source "
                        + "computation, internal stream, Transform with " + joiner + ")")
                        + (base == Job.PLAIN_GLOBAL ? " vs plain Kafka Streams KStream-GlobalKTable leftJoin"
                                : " vs plain Kafka Streams co-partitioned KStream-KTable leftJoin");
                double f = median(of(all, flow), Run::rate);
                double b = median(of(all, base), Run::rate);
                double fs = median(of(all, flow), Run::steadyRate);
                double bs = median(of(all, base), Run::steadyRate);
                double fc = median(of(all, flow), Run::cpuUsPerEvent);
                double bc = median(of(all, base), Run::cpuUsPerEvent);
                rows.add(String.format(Locale.ROOT, "| enrich throughput, %s: %s; median of %d interleaved rounds | "
                                + "%,.0f events/s | %,.0f events/s | %.2fx (%s; job CPU %.1f vs %.1f us/event%s) | %s | %s |",
                        setting, what, runs, f, b, f / b, verdict(f / b, target), fc, bc, checked, LocalDate.now(),
                        command));
                rows.add(String.format(Locale.ROOT, "| enrich throughput once running (events/s while the outputs went "
                                + "from 20%% to 90%%: without JVM start, store restore, rebalance and the closing commit), %s: "
                                + "%s (same runs as the row above) | %,.0f events/s | %,.0f events/s | %.2fx (%s) | %s | %s |",
                        setting, what, fs, bs, fs / bs, verdict(fs / bs, target), LocalDate.now(), command));
            }
        }
        return rows;
    }

    private static String verdict(double ratio, boolean target) {
        if (Double.isNaN(ratio)) {
            return "not measured";
        }
        return target ? "target >= 0.90: " + (ratio >= 0.9 ? "met" : "missed") : "no target";
    }

    // ---- input

    /** The reference topic: {@code keys} Avro rows keyed by {@code k<i>}, compacted as a table's topic is. */
    private void writeReference() throws Exception {
        referenceTopic = "enr-" + stamp + "-reference";
        cluster.createTopic(referenceTopic, partitions, Map.of("cleanup.policy", "compact"));
        keep.add(referenceTopic);
        long t = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            AtomicReference<Exception> error = new AtomicReference<>();
            for (int i = 0; i < keys; i++) {
                producer.send(new ProducerRecord<>(referenceTopic, EnrichJobs.key(i).getBytes(StandardCharsets.UTF_8),
                        EnrichJobs.encodeRow(EnrichJobs.referenceRow(i))), (md, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
            if (error.get() != null) {
                throw new IllegalStateException("writing the reference failed", error.get());
            }
        }
        System.out.printf(Locale.ROOT, "  reference %s: %,d rows written in %.1f s%n", referenceTopic, keys,
                (System.nanoTime() - t) / 1e9);
    }

    /** An events topic of {@code n} events, keys drawn uniformly (seeded). */
    private Input input(String name, int n) throws Exception {
        String topic = "enr-" + stamp + "-" + name + "-events";
        cluster.createTopic(topic, partitions);
        keep.add(topic);
        SplittableRandom random = new SplittableRandom(seed + name.hashCode());
        long t = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            AtomicReference<Exception> error = new AtomicReference<>();
            for (int i = 0; i < n; i++) {
                int k = random.nextInt(keys);
                producer.send(new ProducerRecord<>(topic, EnrichJobs.key(k).getBytes(StandardCharsets.UTF_8),
                        EnrichJobs.eventJson(i, k, i % 1000, valueBytes)), (md, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
            if (error.get() != null) {
                throw new IllegalStateException("writing the events failed", error.get());
            }
        }
        System.out.printf(Locale.ROOT, "  events %s: %,d written in %.1f s%n", topic, n, (System.nanoTime() - t) / 1e9);
        return new Input(topic, n);
    }

    private Properties producerProps() {
        Properties p = Workload.producerProps(cluster.bootstrapServers());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(128 * 1024));
        // one request in flight: the first batch of a just-created partition cannot be overtaken (README, Caveats)
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        return p;
    }

    /**
     * Runs the loader pipeline (a manager over the reference) to completion in a job JVM, then checks that its table
     * topic holds a row for every key.
     */
    private void loadTable() throws Exception {
        String pipeline = "enr-" + stamp + "-loader";
        tableTopic = EnrichJobs.tableTopic(pipeline);
        Path dir = workDir.resolve("loader");
        Files.createDirectories(dir.resolve("tmp"));
        Path log = workDir.resolve("loader.log");
        List<String> cmd = javaCommand(dir);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), EnrichJobs.class.getName(), "load",
                cluster.bootstrapServers(), pipeline, "-", referenceTopic, tableTopic, "-", dir.resolve("state").toString(),
                Integer.toString(partitions), Integer.toString(threads), Long.toString(commitMs)));
        long t = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        children.add(p);
        boolean done = p.waitFor(timeoutS, TimeUnit.SECONDS);
        children.remove(p);
        if (!done || p.exitValue() != 0) {
            p.destroyForcibly();
            tail(log);
            throw new IllegalStateException("the loader did not complete (" + (done ? "exit " + p.exitValue()
                    : "timed out") + "); log: " + log);
        }
        long rows = countKeys(tableTopic);
        System.out.printf(Locale.ROOT, "  table %s: loaded by pipeline %s in %.1f s (job JVM included), %,d distinct "
                + "keys%n", tableTopic, pipeline, (System.nanoTime() - t) / 1e9, rows);
        if (rows != keys) {
            throw new IllegalStateException("the table topic " + tableTopic + " holds " + rows + " keys, not " + keys);
        }
        // the table topic and whatever the loader created stay: every flow run reads the table
        keep.addAll(cluster.admin().listTopics().names().get());
    }

    /** Distinct keys of a topic's committed records (non-null values). */
    private long countKeys(String topic) {
        Properties p = OutputMeter.consumerProps(cluster.bootstrapServers());
        Set<java.nio.ByteBuffer> seen = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value() != null) {
                        seen.add(java.nio.ByteBuffer.wrap(r.key()));
                    }
                }
                boolean atEnd = true;
                for (TopicPartition tp : tps) {
                    atEnd &= consumer.position(tp) >= end.get(tp);
                }
                if (atEnd) {
                    break;
                }
            }
        }
        return seen.size();
    }

    // ---- one run

    private List<String> javaCommand(Path runDir) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + jobHeap);
        cmd.add("-Xmx" + jobHeap);
        // a temporary directory of the run's own (deleted with its state): a job JVM killed at a timeout would
        // leave RocksDB's native library in the system's
        Files.createDirectories(runDir.resolve("tmp"));
        cmd.add("-Djava.io.tmpdir=" + runDir.resolve("tmp"));
        cmd.addAll(jobJvmOpts);
        if (cacheTtl != null) {
            cmd.add("-D" + EnrichJobs.CACHE_TTL_PROPERTY + "=" + cacheTtl);
        }
        return cmd;
    }

    private Run runJob(Job job, int round, Input in) throws Exception {
        String runId = stamp + "-" + (round == 0 ? "warm" : "r" + round) + "-" + job.label;
        String output = "enr-" + runId + "-out";
        cluster.createTopic(output, partitions);
        Path runDir = workDir.resolve(runId);
        Path log = workDir.resolve(runId + ".log");
        List<String> cmd = javaCommand(runDir);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), EnrichJobs.class.getName(), job.label,
                cluster.bootstrapServers(), "enr-" + runId, in.topic(), referenceTopic, tableTopic, output,
                runDir.resolve("state").toString(), Integer.toString(partitions), Integer.toString(threads),
                Long.toString(commitMs)));
        EnrichMeter meter = new EnrichMeter(cluster.bootstrapServers(), output, partitions, in.events());
        long[] cpu0 = {systemBusyTicks(), procCpuTicks(ProcessHandle.current().pid())};
        long launch = System.currentTimeMillis();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        children.add(p);
        AtomicReference<Long> t0 = new AtomicReference<>();
        AtomicReference<Long> running = new AtomicReference<>();
        AtomicReference<String> finished = new AtomicReference<>("");
        AtomicReference<Boolean> failed = new AtomicReference<>(false);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                    BufferedWriter w = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
                String line;
                while ((line = r.readLine()) != null) {
                    w.write(line);
                    w.newLine();
                    w.flush();
                    if (line.startsWith("T0 ")) {
                        t0.set(Long.parseLong(line.substring(3).trim()));
                    } else if (line.startsWith("RUNNING ")) {
                        running.compareAndSet(null, Long.parseLong(line.substring(8).trim()));
                    } else if (line.startsWith("FAILED ")) {
                        failed.set(true);
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
        long deadline = launch + timeoutS * 1000;
        long jobCpu = -1; // the job JVM's CPU ticks, sampled while it runs
        while (!meter.isComplete() && System.currentTimeMillis() < deadline && p.isAlive() && !failed.get()) {
            meter.awaitComplete(100);
            long ticks = procCpuTicks(p.pid());
            if (ticks >= 0 && p.isAlive()) {
                jobCpu = ticks;
            }
        }
        long ticks = procCpuTicks(p.pid());
        jobCpu = ticks >= 0 ? ticks : jobCpu;
        long[] cpu1 = {systemBusyTicks(), procCpuTicks(ProcessHandle.current().pid())};
        long end = meter.isComplete() ? meter.completeAtMs() : System.currentTimeMillis();
        try (OutputStream stdin = p.getOutputStream()) {
            stdin.write("stop\n".getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the process ended
        }
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
            }
        }
        children.remove(p);
        reader.join(5_000);
        Thread.sleep(1_000); // late duplicates, if any
        EnrichMeter.Check check = meter.finish();
        long start = t0.get() != null ? t0.get() : launch;
        double jobCpuS = jobCpu < 0 ? Double.NaN : jobCpu / 100.0;
        double driverCpuS = (cpu1[1] - cpu0[1]) / 100.0;
        double otherCores = Math.max(0, ((cpu1[0] - cpu0[0]) / 100.0 - driverCpuS - (jobCpu < 0 ? 0 : jobCpuS))
                / (Math.max(1, end - launch) / 1000.0));
        String status = finished.get().isEmpty() ? "exit " + (p.isAlive() ? "?" : p.exitValue()) : finished.get();
        StringBuilder tenths = new StringBuilder();
        for (int k = 1; k <= 10; k++) {
            tenths.append(k == 1 ? "" : " ").append(meter.tenthAtMs(k) < 0 ? "-"
                    : String.format(Locale.ROOT, "%.1f", (meter.tenthAtMs(k) - start) / 1000.0));
        }
        System.out.printf("  %s run %s: 10%%, 20%%, ... 100%% of the outputs at %s s from start%n", job.label, runId,
                tenths);
        Run run = new Run(job, round, in.events(), (end - start) / 1000.0, (start - launch) / 1000.0,
                running.get() == null ? Double.NaN : (running.get() - start) / 1000.0,
                meter.firstAtMs() < 0 ? Double.NaN : (meter.firstAtMs() - start) / 1000.0, steadySeconds(meter),
                jobCpuS, driverCpuS, otherCores, status, check);
        if (!check.ok() || !status.equals("ok")) {
            System.out.printf("  %s run %s: %s; status %s; last lines of %s:%n", job.label, runId, check.problem(),
                    status, log);
            tail(log);
        }
        cleanUp(runDir);
        return run;
    }

    private static void tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        lines.subList(Math.max(0, lines.size() - 40), lines.size()).forEach(l -> System.out.println("    | " + l));
    }

    /** Seconds from 20% to 90% of the outputs, or NaN when unknown or shorter than two commit intervals. */
    private double steadySeconds(EnrichMeter meter) {
        long from = meter.tenthAtMs(2);
        long to = meter.tenthAtMs(9);
        if (from < 0 || to < 0 || to - from < 2 * commitMs) {
            return Double.NaN;
        }
        return (to - from) / 1000.0;
    }

    /** Deletes the run's topics (output, changelogs, internal streams; not the input and table) and its state. */
    private void cleanUp(Path runDir) {
        try {
            Admin admin = cluster.admin();
            List<String> delete = admin.listTopics().names().get().stream()
                    .filter(t -> !t.startsWith("__") && !keep.contains(t)).toList();
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

    // ---- figures

    private static List<Run> of(List<Run> all, Job job) {
        return all.stream().filter(r -> r.job() == job).toList();
    }

    private static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).filter(d -> !Double.isNaN(d)).sorted().toArray();
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
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** utime + stime of a process, in clock ticks (USER_HZ, 100 on Linux); -1 if unknown. */
    private static long procCpuTicks(long pid) {
        try {
            String stat = Files.readString(Paths.get("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
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
}
