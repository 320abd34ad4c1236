package io.flowkafka.benchmarks;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Key-visitor benchmarks on the in-JVM broker (issue: "1M keys, achieved period within 5% of the
 * target; main-stream throughput during a pass >= 0.9x of the same run without a visitor").
 *
 * <ul>
 *   <li><b>period</b>: {@code --keys} (1M) keys are put into a keyed computation's state over
 *       {@code --partitions} (4) partitions; its key visitor (period {@code --period-s}, 60 s; each
 *       visit reads the key's state) runs; the achieved duration of every complete pass after the
 *       load (passes 1 and 2 of each partition) is read from the
 *       {@code flow.key_visitor.pass_duration_seconds} gauge and compared with the period.</li>
 *   <li><b>throughput</b>: the same pipeline with and without the visitor, interleaved over
 *       {@code --runs} (3) rounds: the state is loaded with the keys; then, with the visitor
 *       scanning them at its steady rate, {@code --records} (1M) updates of those keys are
 *       produced as fast as the producer can (faster than the pipeline, so a backlog builds), and
 *       the time from the first send until every record is consumed (committed offsets at the end
 *       offsets) gives the pipeline's records/s during a pass. Pausing the runtime instead would
 *       hold open transactions past their timeout.</li>
 * </ul>
 *
 * <p>Run: {@code benchmarks/run-visitor.sh} (builds, then runs this class; options: see --help).
 */
public final class KeyVisitorBenchmark {
    static final Schema EVENT = SchemaBuilder.record("Put").namespace("bench").fields()
            .requiredString("key").optionalString("pad").endRecord();
    static final Schema SEEN = SchemaBuilder.record("Seen").namespace("bench").fields().requiredLong("n").endRecord();

    private int keys = 1_000_000;
    private int records = 1_000_000;
    private int partitions = 4;
    private int periodS = 60;
    private int runs = 5;
    private int threads = 1;
    private boolean periodMode = true;
    private boolean throughputMode = true;
    private Path results = Paths.get("benchmarks/RESULTS.md");
    private final List<String> commandLine = new ArrayList<>();
    private EmbeddedKafkaCluster cluster;
    private String cpuNote = "";
    private final String stamp = Long.toString(System.currentTimeMillis() % 1_000_000);

    /** Counts puts per key; visits read the key's state, as a TTL check would. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord s = new GenericData.Record(SEEN);
            s.put("n", context.getState("seen").get().map(r -> (Long) r.get("n")).orElse(0L) + 1);
            context.getState("seen").set(s);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            context.getState("seen").get();
        }
    }

    static PipelineSpec spec(String name, String input, int partitions, int periodS, boolean visitor) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("puts", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("puts"))
                .computation("keeper", c -> {
                    c.inputStreamIds("puts").desiredPartitionCount(partitions)
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                            .state("seen", SEEN).processingFunction(Keeper::new);
                    if (visitor) {
                        c.keyVisitorStream("v", Map.of("period", periodS + "s", "finite", false));
                    }
                })
                .build();
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        KeyVisitorBenchmark b = new KeyVisitorBenchmark();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help")) {
                System.out.println("options: --keys N (1000000) --records N (1000000) --partitions N (4) --period-s N (60)"
                        + " --runs N (3) --threads N (1) --modes period,throughput --results FILE | --no-results");
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
                case "--keys" -> b.keys = Integer.parseInt(v);
                case "--records" -> b.records = Integer.parseInt(v);
                case "--partitions" -> b.partitions = Integer.parseInt(v);
                case "--period-s" -> b.periodS = Integer.parseInt(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--threads" -> b.threads = Integer.parseInt(v);
                case "--modes" -> {
                    b.periodMode = v.contains("period");
                    b.throughputMode = v.contains("throughput");
                }
                case "--results" -> b.results = Paths.get(v);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        b.run();
        System.exit(0);
    }

    private void run() throws Exception {
        System.out.printf("KeyVisitorBenchmark: %,d keys, %d partitions, period %d s, %,d records, %d rounds, %d stream "
                + "thread(s); load average %s%n", keys, partitions, periodS, records, runs, threads, CpuSampler.loadAverage());
        cluster = EmbeddedKafkaCluster.start();
        List<String> rows = new ArrayList<>();
        cpuNote = "";
        String date = LocalDate.now().toString();
        String command = "`benchmarks/run-visitor.sh" + (commandLine.isEmpty() ? "" : " " + String.join(" ", commandLine))
                + "`";
        try {
            if (periodMode) {
                double[] achieved = period();
                double median = achieved[0];
                double max = achieved[1];
                double ratio = median / periodS;
                rows.add(String.format(Locale.ROOT, "| key visitor achieved period, %s keys, %d partitions: median "
                        + "(max) complete pass vs target period | %.1f s (max %.1f s) | %d s | %.3fx (target within "
                        + "5%%: %s) | %s | %s |", compact(keys), partitions, median, max, periodS, ratio,
                        Math.abs(ratio - 1) <= 0.05 && Math.abs(max / periodS - 1) <= 0.05 ? "met" : "missed", date,
                        command));
            }
            if (throughputMode) {
                Map<Boolean, List<Double>> rates = new HashMap<>();
                Map<Boolean, List<Double>> cpu = new HashMap<>();
                for (int round = 1; round <= runs; round++) {
                    // alternate the order, so that neither variant always runs on the older broker state
                    for (boolean visitor : round % 2 == 1 ? List.of(false, true) : List.of(true, false)) {
                        double[] r = throughput(round, visitor);
                        rates.computeIfAbsent(visitor, k -> new ArrayList<>()).add(r[0]);
                        cpu.computeIfAbsent(visitor, k -> new ArrayList<>()).add(r[1]);
                        System.out.printf("  round %d %-14s %,9.0f records/s, stream-thread CPU %.2f us/record%n", round,
                                visitor ? "with visitor" : "without", r[0], r[1]);
                    }
                }
                double with = median(rates.get(true));
                double without = median(rates.get(false));
                System.out.printf("  medians: with %,.0f, without %,.0f records/s; stream-thread CPU with %.2f, without "
                        + "%.2f us/record%n", with, without, median(cpu.get(true)), median(cpu.get(false)));
                cpuNote = String.format(Locale.ROOT, "; stream-thread CPU %.2f vs %.2f us/record", median(cpu.get(true)),
                        median(cpu.get(false)));
                rows.add(String.format(Locale.ROOT, "| key visitor: main-stream throughput during a pass, %s-record "
                        + "backlog over %s keys in state, period %d s, %d partitions, %d stream thread(s): with vs "
                        + "without the visitor (median of %d rounds) | %,.0f records/s | %,.0f records/s | %.2fx (target "
                        + ">= 0.90: %s%s) | %s | %s |", compact(records), compact(keys), periodS, partitions, threads,
                        runs, with, without, with / without, with / without >= 0.9 ? "met" : "missed", cpuNote, date,
                        command));
            }
        } finally {
            cluster.close();
        }
        System.out.println();
        rows.forEach(System.out::println);
        if (results != null) {
            ResultsFile.upsertSummaryRows(results, rows);
            System.out.println("updated " + results);
        }
    }

    private Properties props(String stateDir) {
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrapServers());
        p.put("state.dir", stateDir);
        p.put("commit.interval.ms", "100");
        p.put("num.stream.threads", Integer.toString(threads));
        return p;
    }

    /** The achieved pass durations after the load: {median, max} in seconds. */
    private double[] period() throws Exception {
        String name = "kvbench-period-" + stamp;
        String input = name + "-in";
        cluster.createTopic(input, partitions);
        produce(input, keys, 0);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FlowRuntime runtime = FlowRuntime.create(spec(name, input, partitions, periodS, true),
                props(CountingBenchmark.tempDirDeletedAtExit("kvbench").toString()), registry);
        List<Double> durations = new ArrayList<>();
        try {
            runtime.start();
            await(Duration.ofMinutes(2), () -> runtime.state() == FlowRuntime.State.RUNNING);
            // per partition: when (wall clock) its pass gauge first showed each pass number
            Map<String, Map<Long, Long>> seenAt = new TreeMap<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(periodS * 5L + 120).toNanos();
            while (System.nanoTime() < deadline) {
                int done = 0;
                for (Gauge g : registry.find("flow.key_visitor.pass").gauges()) {
                    String p = g.getId().getTag("partition");
                    long pass = (long) g.value();
                    seenAt.computeIfAbsent(p, k -> new TreeMap<>()).putIfAbsent(pass, System.nanoTime());
                    if (pass >= 3) {
                        done++;
                    }
                }
                if (done == partitions) {
                    break;
                }
                Thread.sleep(20);
            }
            for (Map.Entry<String, Map<Long, Long>> e : seenAt.entrySet()) {
                Map<Long, Long> at = e.getValue();
                for (long pass = 1; pass <= 2; pass++) {
                    if (at.containsKey(pass) && at.containsKey(pass + 1)) {
                        // pass starts after the load: the achieved period is the time from one pass start to the next
                        double d = (at.get(pass + 1) - at.get(pass)) / 1e9;
                        durations.add(d);
                        System.out.printf("  partition %s: pass %d took %.2f s (start to next start)%n", e.getKey(), pass, d);
                    }
                }
            }
            double processed = registry.find("flow.key_visitor.processed_count").functionCounters().stream()
                    .mapToDouble(c -> c.count()).sum();
            System.out.printf("  visits processed: %,.0f (%.2f per key)%n", processed, processed / keys);
        } finally {
            runtime.close();
        }
        if (durations.size() < partitions * 2) {
            throw new IllegalStateException("only " + durations.size() + " complete passes seen: " + durations);
        }
        Collections.sort(durations);
        return new double[] {median(durations), durations.get(durations.size() - 1)};
    }

    /** records/s of a backlog of updates processed while the visitor (if any) scans the loaded state. */
    private double[] throughput(int round, boolean visitor) throws Exception {
        String name = "kvbench-tp-" + stamp + "-r" + round + (visitor ? "-v" : "-n");
        String input = name + "-in";
        cluster.createTopic(input, partitions);
        produce(input, keys, 0);
        FlowRuntime runtime = FlowRuntime.create(spec(name, input, partitions, periodS, visitor),
                props(CountingBenchmark.tempDirDeletedAtExit("kvbench").toString()));
        try {
            runtime.start();
            await(Duration.ofMinutes(2), () -> runtime.state() == FlowRuntime.State.RUNNING);
            await(Duration.ofMinutes(5), () -> caughtUp(runtime, input));
            // the visitor now scans the loaded state at its steady rate; a producer faster than the pipeline
            // builds a backlog of updates, and the time until it is consumed gives the pipeline's rate
            long t0 = System.nanoTime();
            long cpu0 = streamThreadCpuNanos(name);
            produce(input, records, 1);
            await(Duration.ofMinutes(5), () -> caughtUp(runtime, input));
            double seconds = (System.nanoTime() - t0) / 1e9;
            double cpuUsPerRecord = (streamThreadCpuNanos(name) - cpu0) / 1e3 / records;
            return new double[] {records / seconds, cpuUsPerRecord};
        } finally {
            runtime.close();
        }
    }

    /** Whether the committed offsets of the app reached the end of its source and internal topics. */
    private boolean caughtUp(FlowRuntime runtime, String input) {
        try (Admin admin = Admin.create(cluster.clientProperties())) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(runtime.applicationId())
                    .partitionsToOffsetAndMetadata().get();
            Set<String> topics = new java.util.HashSet<>(runtime.internalTopics().keySet());
            topics.removeIf(t -> !t.endsWith(".puts"));
            topics.add(input);
            Map<TopicPartition, OffsetSpec> req = new LinkedHashMap<>();
            for (String t : topics) {
                for (int p = 0; p < partitions; p++) {
                    req.put(new TopicPartition(t, p), OffsetSpec.latest());
                }
            }
            var ends = admin.listOffsets(req).all().get();
            for (var e : ends.entrySet()) {
                OffsetAndMetadata c = committed.get(e.getKey());
                // the end offset counts transaction markers and the watermark heartbeats written all the time
                // to internal topics: committed within 20 of it is caught up (of a backlog of 100k or more)
                if (e.getValue().offset() > 0 && (c == null || c.offset() < e.getValue().offset() - 20)) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private void produce(String topic, int n, int generation) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(128 * 1024));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                String key = "k" + (i % keys);
                producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                        ("{\"key\":\"" + key + "\",\"pad\":\"g" + generation + "\"}").getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    /** CPU nanos so far of the stream threads of the app named {@code name}. */
    private static long streamThreadCpuNanos(String name) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti != null && ti.getThreadName().startsWith(name) && ti.getThreadName().matches(".*-StreamThread-[0-9]+")) {
                sum += Math.max(0, mx.getThreadCpuTime(ti.getThreadId()));
            }
        }
        return sum;
    }

    private static void await(Duration bound, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not reached within " + bound);
            }
            Thread.sleep(100);
        }
    }

    private static double median(List<Double> values) {
        List<Double> s = new ArrayList<>(values);
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private static String compact(long n) {
        return n % 1_000_000 == 0 ? n / 1_000_000 + "M" : n % 1000 == 0 ? n / 1000 + "k" : Long.toString(n);
    }
}
