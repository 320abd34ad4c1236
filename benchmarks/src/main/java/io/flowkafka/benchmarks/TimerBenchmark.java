package io.flowkafka.benchmarks;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Timers at scale on a real broker (issue: "10M timers registered and fired at -Xmx256m: peak
 * heap, timers/s, and the p99 duration of a punctuation while a 1M-timer backlog fires (commits
 * keep happening throughout)").
 *
 * <p>The parent JVM runs the in-JVM broker and produces {@code --timers} (10M) messages to one
 * partition, each registering one event-time timer for its own key, far in the future, then one
 * message whose event time passes every trigger. The pipeline runs in a child JVM with
 * {@code -Xmx256m}: a Source computation and a Transform {@code timers} with one partition (one
 * task holds every timer). Each fired timer whose key ends in "00" writes one record to a sink
 * topic, so the parent sees committed output grow while the backlog fires (read_committed). The
 * child prints its peak heap (after-GC use of the heap pools), timers registered and fired, and the
 * {@code flow.timers.punctuation} percentiles.
 *
 * <p>Run: {@code benchmarks/run-timers.sh [--timers N] [--no-results]}.
 */
public final class TimerBenchmark {
    static final Schema EVENT = SchemaBuilder.record("Reg").namespace("bench").fields()
            .requiredString("key").requiredLong("ts").endRecord();
    static final Schema FIRED = SchemaBuilder.record("Fired").namespace("bench").fields()
            .requiredString("key").requiredLong("trigger").endRecord();
    static final long DAY_MS = 86_400_000L;

    /** Registers one timer per message, a day after the message's event time; reports some fired timers. */
    public static final class Registrar implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (message.getPayload().get("key").toString().equals("advance")) {
                return;
            }
            output.addTimer(message.getEventTimestamp() + DAY_MS * 1_000_000L, message.getEventTimestamp());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            String key = timer.getKey().get("key").toString();
            if (key.endsWith("00")) {
                output.addMessage(context.createMessageBuilder("fired").set("key", key)
                        .set("trigger", timer.getTriggerTimestamp()).build());
            }
        }
    }

    static PipelineSpec spec(String name, String input, String output) {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        return PipelineSpec.builder(name).stream("raw", EVENT).stream("regs", EVENT).stream("fired", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("regs"))
                .computation("timers", c -> c.inputStreamIds("regs").desiredPartitionCount(1)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Registrar::new).outputStreamIds("fired")
                        .timer("t", Map.of())
                        .sink("out", "KafkaSink", List.of("fired"), Map.of("topic", output, "key_column", "key")))
                .build();
    }

    /** The child: runs the pipeline and reports. Args: bootstrap name input output stateDir expected. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
            long expected = Long.parseLong(args[5]);
            Properties p = new Properties();
            p.put("bootstrap.servers", args[0]);
            p.put("state.dir", args[4]);
            p.put("commit.interval.ms", "100");
            p.put("num.stream.threads", "1");
            // -Dbench.streams.<key>=<value> on the benchmark reaches the pipeline as <key>=<value>
            System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("bench.streams."))
                    .forEach(k -> p.put(k.substring("bench.streams.".length()), System.getProperty(k)));
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (FlowRuntime runtime = FlowRuntime.create(spec(args[1], args[2], args[3]), p, registry)) {
                runtime.start();
                System.out.println("STARTED");
                long peak = 0;
                double lastFired = -1;
                long nextReport = System.nanoTime();
                while (true) {
                    peak = Math.max(peak, heapAfterGc());
                    var counter = registry.find("flow.timers.fired").counter();
                    double fired = counter == null ? 0 : counter.count();
                    if (System.nanoTime() >= nextReport || fired >= expected) {
                        nextReport = System.nanoTime() + 5_000_000_000L;
                        System.out.printf(Locale.ROOT, "STATUS fired=%.0f peakHeapMB=%d state=%s%n", fired, peak >> 20,
                                runtime.state());
                        System.out.flush();
                    }
                    if (fired >= expected) {
                        break;
                    }
                    lastFired = fired;
                    Thread.sleep(200);
                }
                var timer = registry.find("flow.timers.punctuation").timer();
                StringBuilder pct = new StringBuilder();
                for (ValueAtPercentile v : timer.takeSnapshot().percentileValues()) {
                    pct.append(String.format(Locale.ROOT, " p%s=%.1fms", trim(v.percentile() * 100),
                            v.value(java.util.concurrent.TimeUnit.NANOSECONDS) / 1e6));
                }
                System.out.printf(Locale.ROOT, "RESULT fired=%.0f peakHeapMB=%d maxHeapMB=%d steps=%d maxStepMs=%.1f%s%n",
                        registry.find("flow.timers.fired").counter().count(), peak >> 20,
                        Runtime.getRuntime().maxMemory() >> 20, timer.count(),
                        timer.max(java.util.concurrent.TimeUnit.NANOSECONDS) / 1e6, pct);
                System.out.flush();
                if (lastFired < 0) {
                    System.out.println("(no progress samples)");
                }
            }
            System.exit(0);
        }

        private static String trim(double d) {
            return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
        }

        /** Heap in use after the last GC, summed over heap pools (what a collector could not free). */
        private static long heapAfterGc() {
            long sum = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP && pool.getCollectionUsage() != null) {
                    sum += pool.getCollectionUsage().getUsed();
                }
            }
            return sum;
        }
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        long timers = 10_000_000L;
        Path results = Paths.get("benchmarks/RESULTS.md");
        StringBuilder cmd = new StringBuilder();
        for (int i = 0; i < args.length; i++) {
            cmd.append(' ').append(args[i]);
            if (args[i].equals("--timers")) {
                timers = Long.parseLong(args[++i]);
                cmd.append(' ').append(args[i]);
            } else if (args[i].equals("--no-results")) {
                results = null;
            }
        }
        String stamp = Long.toString(System.currentTimeMillis() % 1_000_000);
        String name = "timerbench-" + stamp;
        String input = name + "-in";
        String output = name + "-out";
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start()) {
            cluster.createTopic(input, 1);
            cluster.createTopic(output, 1);
            Path state = CountingBenchmark.tempDirDeletedAtExit("timerbench");
            long expectedOutputs = 0;
            ChildJvm.Builder builder = ChildJvm.builder(Child.class).maxHeap("256m")
                    .args(cluster.bootstrapServers(), name, input, output, state.toString(), Long.toString(timers));
            System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("bench.streams."))
                    .forEach(k -> builder.systemProperty(k, System.getProperty(k)));
            String tv = System.getProperty(EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY, "the broker default (2)");
            System.out.println("embedded broker transaction.version: " + tv);
            try (ChildJvm child = builder.start()) {
                child.awaitOutputLine(l -> l.contains("STARTED"), Duration.ofMinutes(2));
                long t0 = System.nanoTime();
                Properties p = cluster.clientProperties();
                p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
                p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(256 * 1024));
                long baseTs = 1_700_000_000_000L;
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                    for (long i = 0; i < timers; i++) {
                        String key = "k" + i;
                        if (key.endsWith("00")) {
                            expectedOutputs++;
                        }
                        // event times rise by 1 ms per 100 messages: the watermark moves, no trigger (a day on) passes
                        producer.send(new ProducerRecord<>(input, key.getBytes(StandardCharsets.UTF_8),
                                ("{\"key\":\"" + key + "\",\"ts\":" + (baseTs + i / 100) + "}")
                                        .getBytes(StandardCharsets.UTF_8)));
                    }
                    producer.flush();
                    System.out.printf(Locale.ROOT, "produced %,d registrations in %.1f s%n", timers,
                            (System.nanoTime() - t0) / 1e9);
                    long advanceTs = baseTs + timers / 100 + 2 * DAY_MS;
                    producer.send(new ProducerRecord<>(input, "advance".getBytes(StandardCharsets.UTF_8),
                            ("{\"key\":\"advance\",\"ts\":" + advanceTs + "}").getBytes(StandardCharsets.UTF_8)));
                }
                // the first timer fires once every registration is in (the watermark passes a day on only with
                // "advance"), so the time to the first fired output is the registration time
                long registeredAt = 0;
                long[] outputsSeen = {0};
                int growthSamples = 0;
                Properties c = cluster.clientProperties();
                c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
                c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
                c.put(ConsumerConfig.GROUP_ID_CONFIG, name + "-verify");
                c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                long deadline = System.nanoTime() + Duration.ofMinutes(30).toNanos();
                try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
                    consumer.subscribe(List.of(output));
                    while (outputsSeen[0] < expectedOutputs && System.nanoTime() < deadline) {
                        int n = consumer.poll(Duration.ofMillis(500)).count();
                        if (n > 0) {
                            if (registeredAt == 0) {
                                registeredAt = System.nanoTime();
                            }
                            outputsSeen[0] += n;
                            growthSamples++;
                        }
                    }
                }
                long done = System.nanoTime();
                String result = child.awaitOutputLine(l -> l.startsWith("RESULT "), Duration.ofMinutes(2));
                double registerS = (registeredAt - t0) / 1e9;
                double fireS = (done - registeredAt) / 1e9;
                System.out.println(result);
                System.out.printf(Locale.ROOT, "registered %,d timers in %.1f s (%,.0f/s, produce included); fired them "
                        + "in %.1f s (%,.0f/s); committed outputs seen growing in %d polls (%,d of %,d)%n", timers,
                        registerS, timers / registerS, fireS, timers / fireS, growthSamples, outputsSeen[0],
                        expectedOutputs);
                if (outputsSeen[0] != expectedOutputs) {
                    throw new IllegalStateException("saw " + outputsSeen[0] + " outputs of " + expectedOutputs);
                }
                if (results != null) {
                    String peak = value(result, "peakHeapMB");
                    String row = String.format(Locale.ROOT, "| timers: %s pending in one task, registered and fired, "
                            + "pipeline JVM at -Xmx256m: peak heap after GC; registration and firing rates; p99 of a "
                            + "firing step | %s MB peak heap; %,.0f registered/s; %,.0f fired/s; firing step p99 %s, "
                            + "max %s ms over %s steps; commits throughout (%d growing polls) | Flow keeps every pending "
                            + "timer in process memory (reference 003) | n/a (absolute target: runs at -Xmx256m: met) "
                            + "| %s | `%sbenchmarks/run-timers.sh%s` |", compact(timers), peak, timers / registerS,
                            timers / fireS, value(result, "p99"), value(result, "maxStepMs"), value(result, "steps"),
                            growthSamples, LocalDate.now(), System.getProperty(
                                    EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY) == null ? ""
                                    : "JAVA_OPTS=\"-Xms1g -Xmx1g -D" + EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY
                                    + "=" + System.getProperty(EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY)
                                    + "\" ", cmd);
                    ResultsFile.upsertSummaryRows(results, List.of(row));
                    System.out.println(row);
                }
            }
        }
        System.exit(0);
    }

    private static String value(String result, String key) {
        for (String part : result.split(" ")) {
            if (part.startsWith(key + "=")) {
                return part.substring(key.length() + 1);
            }
        }
        return "?";
    }

    private static String compact(long n) {
        return n % 1_000_000 == 0 ? n / 1_000_000 + "M" : n % 1000 == 0 ? n / 1000 + "k" : Long.toString(n);
    }
}
