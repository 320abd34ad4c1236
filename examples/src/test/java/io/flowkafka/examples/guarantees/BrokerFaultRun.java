package io.flowkafka.examples.guarantees;

import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.PARTITIONS;
import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.USERS;
import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.eventTimeMs;
import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.id;
import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.recordsBeforeTrigger;
import static io.flowkafka.examples.guarantees.BrokerFaultPipeline.user;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.flowkafka.testing.ExactlyOnceChecker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.assertj.core.api.SoftAssertions;

/**
 * One broker-fault run: the {@link BrokerFaultPipeline} runs exactly-once on a cluster of its own while a producer
 * writes its input at a steady rate; at output thresholds spread over the run (a quarter of the outputs for one
 * fault), a {@link Fault} hits a broker; the runtime is never touched. The rate is below what the pipeline processes
 * on a loaded machine, so input is still flowing when a fault hits. Then every input must have exactly one output with the right contents, and the runtime
 * must be {@code RUNNING}.
 *
 * <p>Time to recover, per fault: from the fault's start to the first committed output read after the fault ended
 * (the broker back, or gone), and to the outputs of every input written before the fault (but the last few, whose
 * timers wait for the watermark of later inputs) being read ("caught up").
 *
 * <p>Threading: the test thread drives; one scheduler thread writes the input, samples the runtime's state and the
 * counters; one thread reads the output.
 */
final class BrokerFaultRun implements AutoCloseable {
    /** A broker fault: returns once it is complete (the broker back, or stopped for good). */
    interface Fault {
        /** Hits the cluster; {@code applicationId} is the pipeline's consumer group. Returns what it did. */
        String inject(EmbeddedKafkaCluster cluster, String applicationId) throws Exception;
    }

    /** One fault's figures, in milliseconds from its start; {@code firstOutputMs} -1 if none was left to write. */
    record Timing(String what, long outageMs, long firstOutputMs, long caughtUpMs) {
        @Override
        public String toString() {
            return what + ": fault took " + outageMs + " ms, first new output at " + firstOutputMs
                    + " ms, caught up at " + caughtUpMs + " ms";
        }
    }

    /** Each wait of a run: generous, for a loaded 2-core machine (load averages of 40 were seen). */
    private static final Duration BOUND = Duration.ofSeconds(90);

    private final EmbeddedKafkaCluster cluster;
    private final String pipeline;
    private final String input;
    private final String output;
    private final int records;
    private final int ratePerSecond;
    private final Properties props;
    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "broker-fault-driver");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong produced = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicReference<Exception> produceError = new AtomicReference<>();
    private final Map<String, List<JsonNode>> outputs = new ConcurrentHashMap<>();
    private final AtomicLong outputCount = new AtomicLong();
    /** (nanoTime, outputs read) after each poll that read some. */
    private final List<long[]> outputArrivals = new CopyOnWriteArrayList<>();
    private final List<String> states = new CopyOnWriteArrayList<>();
    private final long startNanos = System.nanoTime();
    private volatile long producerStartNanos;
    private volatile boolean closed;
    private Thread reader;

    /**
     * @param topicConfig configuration of the input and output topics the test creates (e.g. min ISR)
     * @param runtimeProps properties added to the runtime's (e.g. flow.topics.replication.factor)
     */
    BrokerFaultRun(EmbeddedKafkaCluster cluster, String pipeline, Path stateDir, int records, int ratePerSecond,
            Map<String, String> topicConfig, Map<String, String> runtimeProps) {
        this.cluster = cluster;
        this.pipeline = pipeline;
        this.input = pipeline + "-input";
        this.output = pipeline + "-output";
        this.records = records;
        this.ratePerSecond = ratePerSecond;
        cluster.createTopic(input, PARTITIONS, topicConfig);
        cluster.createTopic(output, PARTITIONS, topicConfig);
        props = cluster.clientProperties();
        props.put("state.dir", stateDir.toString());
        props.put("commit.interval.ms", "100");
        props.put("flow.watermark.interval.ms", "100");
        props.put("flow.watermark.heartbeat.ms", "500");
        props.putAll(runtimeProps);
    }

    /**
     * Runs the pipeline over the whole input with {@code faults} injected one after another, spread over the run,
     * each once the previous has recovered; checks nothing, returns what it saw. A fault whose turn comes after the
     * pipeline wrote every output is not injected: {@link Outcome#timings()} has one entry per fault injected.
     */
    Outcome run(List<Fault> faults) throws Exception {
        try (FlowRuntime runtime = FlowRuntime.create(BrokerFaultPipeline.spec(pipeline, input, output), props)) {
            runtime.start();
            sampleStates(runtime);
            await(Duration.ofMinutes(2), pipeline + " RUNNING", () -> runtime.state() == FlowRuntime.State.RUNNING);
            progress("running");
            startReader();
            startProducer();
            List<Timing> timings = new ArrayList<>();
            for (int k = 0; k < faults.size() && outputs.size() < records; k++) {
                // at a quarter of the outputs for one fault: most of the work still comes after the fault ends
                long threshold = (long) records * (2 * k + 1) / (2L * faults.size() + 2);
                long after = outputCount.get();
                await(BOUND, "outputs of " + pipeline + " >= " + threshold + " and new ones since the last fault",
                        () -> outputCount.get() >= threshold && outputCount.get() > after
                                || outputs.size() >= records);
                if (outputs.size() >= records) {
                    progress("every output written before fault " + (k + 1) + " of " + faults.size());
                    break;
                }
                progress("fault " + (k + 1) + " begins");
                long t0 = System.nanoTime();
                // every input written before the fault has its output, but the last few, whose timers wait for the
                // watermark of the inputs after them
                long before = Math.min(records, produced.get());
                long needed = before == records ? records
                        : before - BrokerFaultPipeline.WAIT_MS / BrokerFaultPipeline.STEP_MS - 2L * PARTITIONS;
                String what = faults.get(k).inject(cluster, runtime.applicationId());
                long t1 = System.nanoTime();
                // (-1 if the pipeline wrote every output before the fault ended)
                await(BOUND, "a committed output of " + pipeline + " after " + what,
                        () -> outputArrivals.stream().anyMatch(a -> a[0] > t1) || outputs.size() >= records);
                long first = outputArrivals.stream().filter(a -> a[0] > t1).findFirst().map(a -> a[0]).orElse(t0 - 1);
                await(BOUND, pipeline + " caught up after " + what + ": " + needed + " outputs",
                        () -> outputArrivals.stream().anyMatch(a -> a[1] >= needed));
                long caughtUp = outputArrivals.stream().filter(a -> a[1] >= needed).findFirst().orElseThrow()[0];
                progress("fault " + (k + 1) + " recovered");
                Timing timing = new Timing(what, ms(t1 - t0), first < t0 ? -1 : ms(first - t0), ms(caughtUp - t0));
                System.out.println("BrokerFault " + pipeline + " fault " + (k + 1) + "/" + faults.size() + ": "
                        + timing);
                timings.add(timing);
            }
            await(BOUND, "every input of " + pipeline + " produced and acknowledged",
                    () -> acked.get() >= records + PARTITIONS || produceError.get() != null);
            await(BOUND, "one output per input of " + pipeline + " (" + records + ")",
                    () -> outputs.size() >= records);
            progress("every output read");
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < records; i++) {
                expected.add(id(i));
            }
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, output, expected,
                    Duration.ofSeconds(60), r -> new String(r.key(), StandardCharsets.UTF_8));
            return new Outcome(report, wrongContents(), timings, runtime.state(), List.copyOf(states),
                    produceError.get());
        }
    }

    /**
     * {@link Await#until}, printing the stack of every stream thread and of the runtime's other threads if the
     * condition does not hold in time: what a stalled pipeline waits for.
     */
    private void await(Duration bound, String what, BooleanSupplier condition) {
        try {
            Await.until(bound, what, condition);
        } catch (AssertionError e) {
            StringBuilder dump = new StringBuilder("BrokerFault " + pipeline + ": threads while waiting for " + what);
            Thread.getAllStackTraces().forEach((t, stack) -> {
                if (t.getName().contains(pipeline) || t.getName().startsWith("kafka-producer")) {
                    dump.append("\n\"").append(t.getName()).append("\" ").append(t.getState());
                    for (StackTraceElement frame : stack) {
                        dump.append("\n    at ").append(frame);
                    }
                }
            });
            System.out.println(dump);
            progress("gave up");
            throw e;
        }
    }

    private void progress(String what) {
        System.out.println("BrokerFault " + pipeline + " at " + ms(System.nanoTime() - startNanos) + " ms: " + what
                + "; inputs " + produced.get() + " (acked " + acked.get() + "), outputs read " + outputCount.get()
                + " (" + outputs.size() + " ids); states " + states);
    }

    /** What a run saw. */
    record Outcome(ExactlyOnceChecker.Report report, List<String> wrongContents, List<Timing> timings,
            FlowRuntime.State finalState, List<String> states, Exception produceError) {
        @Override
        public String toString() {
            return "report " + report + "; wrong contents " + wrongContents.size() + " "
                    + wrongContents.stream().limit(5).toList() + "; timings " + timings + "; final state " + finalState
                    + "; states " + states + "; produce error " + produceError;
        }

        /**
         * Prints the run's figures under {@code test} and checks it: no producer error, every input exactly one
         * output with the right contents, some fault injected, the runtime RUNNING at the end.
         *
         * @param faults how many faults were asked for; {@code what} names them ("restart", "stop")
         */
        void printAndCheck(String test, int faults, String what, int records) {
            System.out.println(test + ": " + faults + " " + what + "(s), " + records + " inputs: " + this
                    + "; first new output after the fault began " + spread(timings, Timing::firstOutputMs)
                    + ", caught up " + spread(timings, Timing::caughtUpMs) + ", " + what + " took "
                    + spread(timings, Timing::outageMs));
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(produceError).as("input producer error").isNull();
            softly.assertThat(report.isExact()).as("every input exactly one output: " + report).isTrue();
            softly.assertThat(wrongContents).as("outputs with wrong contents").isEmpty();
            softly.assertThat(timings).as(what + "s injected").isNotEmpty();
            softly.assertThat(finalState).as("runtime state at the end; states " + states)
                    .isEqualTo(FlowRuntime.State.RUNNING);
            softly.assertAll();
            assertThat(report.total()).isEqualTo(records);
        }
    }

    /**
     * Outputs whose contents are wrong: another user than the input's, or a count below the user's records before
     * the trigger (the timer fired before the watermark passed it) or above all of them.
     */
    private List<String> wrongContents() {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, List<JsonNode>> e : outputs.entrySet()) {
            long index = Long.parseLong(e.getKey().substring(2));
            long all = (records - index % USERS + USERS - 1) / USERS; // the user's records in the whole run
            for (JsonNode n : e.getValue()) {
                long count = n.get("count").asLong();
                long before = recordsBeforeTrigger(index, records);
                if (!n.get("user").asText().equals(user(index)) || count < before || count > all) {
                    wrong.add(e.getKey() + " " + n + " (user " + user(index) + ", count in [" + before + ", " + all
                            + "])");
                }
            }
        }
        return wrong;
    }

    private void sampleStates(FlowRuntime runtime) {
        scheduler.scheduleAtFixedRate(() -> {
            String s = runtime.state().name();
            if (states.isEmpty() || !states.get(states.size() - 1).endsWith(" " + s)) {
                states.add(ms(System.nanoTime() - startNanos) + "ms " + s);
            }
        }, 0, 50, TimeUnit.MILLISECONDS);
    }

    /** The inputs the producer's clock asks for by {@code nanos}: its rate since it started, at most all. */
    private long target(long nanos) {
        long since = producerStartNanos;
        return since == 0 ? 0 : Math.min(records, (nanos - since) * ratePerSecond / 1_000_000_000L);
    }

    /**
     * Writes {@link #ratePerSecond} records a second by the clock (after a blocked send, it catches up at once), then one end marker per partition far past the last timer. */
    private void startProducer() {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1"); // per-partition event-time order kept
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000"); // outlives any fault of the run
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        long tickMs = 50;
        producerStartNanos = System.nanoTime();
        scheduler.scheduleAtFixedRate(() -> {
            long from = produced.get();
            if (from > records) {
                return;
            }
            if (from == records) {
                long endTs = eventTimeMs(records + BrokerFaultPipeline.WAIT_MS / BrokerFaultPipeline.STEP_MS + 100);
                for (int part = 0; part < PARTITIONS; part++) {
                    send(producer, part, "end-" + part, "end", endTs);
                }
                produced.incrementAndGet();
                producer.flush();
                producer.close(Duration.ofSeconds(5));
                return;
            }
            long to = target(System.nanoTime());
            for (long i = from; i < to; i++) {
                send(producer, (int) (i % PARTITIONS), id(i), user(i), eventTimeMs(i));
            }
            produced.set(to);
        }, 0, tickMs, TimeUnit.MILLISECONDS);
    }

    private void send(KafkaProducer<String, String> producer, int partition, String id, String user, long ts) {
        producer.send(new ProducerRecord<>(input, partition, user,
                "{\"id\":\"" + id + "\",\"user\":\"" + user + "\",\"ts\":" + ts + "}"), (md, e) -> {
                    if (e != null) {
                        produceError.compareAndSet(null, e);
                    } else {
                        acked.incrementAndGet();
                    }
                });
    }

    /** Reads the output read_committed from the start, until closed; notes when outputs arrive. */
    private void startReader() {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        ObjectMapper json = new ObjectMapper();
        List<TopicPartition> partitions = new ArrayList<>();
        for (int part = 0; part < PARTITIONS; part++) {
            partitions.add(new TopicPartition(output, part));
        }
        reader = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                c.assign(partitions);
                c.seekToBeginning(partitions);
                while (!closed) {
                    int read = 0;
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                        try {
                            outputs.computeIfAbsent(new String(r.key(), StandardCharsets.UTF_8),
                                    k -> new CopyOnWriteArrayList<>()).add(json.readTree(r.value()));
                        } catch (IOException e) {
                            throw new IllegalStateException("an output that is not JSON: " + r, e);
                        }
                        read++;
                    }
                    if (read > 0) {
                        outputArrivals.add(new long[] {System.nanoTime(), outputCount.addAndGet(read)});
                    }
                }
            }
        }, "broker-fault-output-reader");
        reader.setDaemon(true);
        reader.start();
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        scheduler.shutdownNow();
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
        if (reader != null) {
            reader.join(10_000);
        }
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** Median, min and max of one figure over the timings, as {@code median (min-max)}. */
    static String spread(List<Timing> timings, ToLongFunction<Timing> figure) {
        List<Long> values = timings.stream().map(figure::applyAsLong).filter(v -> v >= 0).sorted().toList();
        if (values.isEmpty()) {
            return "-";
        }
        return values.get(values.size() / 2) + " ms (" + values.get(0) + "-" + values.get(values.size() - 1) + ")";
    }
}
