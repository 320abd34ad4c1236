package io.flowkafka.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The same per-key counting job three ways. Each reads the input topic (key = counting key,
 * value = JSON {@code {"key":..,"pad":..}}), counts per key in a persistent RocksDB store with a
 * changelog and the store cache on, and writes {@code {"key":..,"count":..}} keyed by the key for
 * every input record, with the input record's timestamp.
 *
 * <ul>
 *   <li>{@link Job#PLAIN}: hand-written Processor API app, one sub-topology (input already keyed
 *       by the counting key, so no repartition): source -> count processor -> sink.</li>
 *   <li>{@link Job#PLAIN_REPARTITION}: the same processor behind a repartition topic keyed by the
 *       {@code key} field of the payload, as Kafka Streams needs when the input is not keyed by
 *       the counting key: source -> selectKey(parse JSON) -> repartition -> count -> sink.</li>
 *   <li>{@link Job#FLOW_OUTBOX}: the same pipeline with the async {@code TKafkaSink} (same cluster): the
 *       counts go through the transactional outbox {@code <pipeline>.outbox.out} and the outbox
 *       service's exactly-once delivery (Kafka transactions with a progress marker).</li>
 *   <li>{@link Job#FLOW_KEYED}: the same count as a flow-kafka Transform reading the input topic
 *       directly as a key-partitioned source ({@code key_partitioned: true}; the topic is keyed by
 *       the counting key, as the plain app assumes): source -> count -> KafkaSink in one
 *       sub-topology, like the plain app.</li>
 *   <li>{@link Job#FLOW}: the flow-kafka pipeline: a Source computation (KafkaSource, json) ->
 *       internal topic -> a Transform grouped by {@code farm_hash(key), key} with state ->
 *       KafkaSink (json). The hop through the internal topic is the Flow model's: source
 *       computations and keyed computations are separate.</li>
 *   <li>{@link Job#FLOW_PROMETHEUS}: {@link Job#FLOW} with its meters in a {@code PrometheusMeterRegistry}
 *       scraped every 5 s: the cost of the metrics a Prometheus user turns on, next to {@code flow} (a private
 *       {@code SimpleMeterRegistry}, never read).</li>
 *   <li>{@link Job#FLOW_NO_METRICS}: {@link Job#FLOW} with every meter denied ({@code MeterFilter.deny()}, so each
 *       is Micrometer's no-op): the baseline of the metrics cost.</li>
 * </ul>
 */
final class CountingJobs {
    static final String STORE = "counts";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The jobs. */
    enum Job {
        PLAIN("plain"), PLAIN_REPARTITION("plain-repartition"), FLOW("flow"), FLOW_OUTBOX("flow-outbox"),
        FLOW_KEYED("flow-keyed"), FLOW_PROMETHEUS("flow-prometheus"), FLOW_NO_METRICS("flow-nometrics");

        final String label;

        Job(String label) {
            this.label = label;
        }

        static Job parse(String s) {
            for (Job j : values()) {
                if (j.label.equals(s)) {
                    return j;
                }
            }
            throw new IllegalArgumentException("unknown job '" + s + "': use plain, plain-repartition, flow, flow-outbox, "
                    + "flow-keyed, flow-prometheus or flow-nometrics");
        }
    }

    /** A started job. */
    interface Running extends AutoCloseable {
        /** Whether it is processing (RUNNING). */
        boolean isRunning();

        @Override
        void close();
    }

    private CountingJobs() {
    }

    /**
     * Starts {@code job}. {@code common} carries the shared Streams settings (bootstrap servers,
     * processing.guarantee, commit.interval.ms, num.stream.threads, state.dir).
     */
    static Running start(Job job, String appId, String input, String output, int partitions, Properties common) {
        return switch (job) {
            case PLAIN -> startStreams(plainTopology(input, output), appId, common);
            case PLAIN_REPARTITION -> startStreams(repartitionTopology(input, output, partitions), appId, common);
            case FLOW -> startFlow(flowSpec(appId, input, output, partitions, "KafkaSink"), common);
            case FLOW_PROMETHEUS -> startFlow(flowSpec(appId, input, output, partitions, "KafkaSink"), common,
                    new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
            case FLOW_NO_METRICS -> startFlow(flowSpec(appId, input, output, partitions, "KafkaSink"), common,
                    deniedMeters());
            case FLOW_OUTBOX -> startFlow(flowSpec(appId, input, output, partitions, "TKafkaSink"), common);
            case FLOW_KEYED -> startFlow(keyedFlowSpec(appId, input, output), common);
        };
    }

    // ---- plain Kafka Streams

    /** The count store: persistent RocksDB, changelog on (the default), caching on as in the DSL. */
    static StoreBuilder<KeyValueStore<String, Long>> storeBuilder() {
        return Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long())
                .withCachingEnabled();
    }

    static Topology plainTopology(String input, String output) {
        Topology t = new Topology();
        t.addSource("input", Serdes.String().deserializer(), Serdes.ByteArray().deserializer(), input);
        t.addProcessor("count", CountProcessor::new, "input");
        t.addStateStore(storeBuilder(), "count");
        t.addSink("output", output, Serdes.String().serializer(), Serdes.ByteArray().serializer(), "count");
        return t;
    }

    static Topology repartitionTopology(String input, String output, int partitions) {
        StreamsBuilder b = new StreamsBuilder();
        b.addStateStore(storeBuilder());
        b.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .selectKey((k, v) -> keyOf(v))
                .repartition(Repartitioned.with(Serdes.String(), Serdes.ByteArray()).withName("by-key")
                        .withNumberOfPartitions(partitions))
                .process(CountProcessor::new, STORE)
                .to(output, Produced.with(Serdes.String(), Serdes.ByteArray()));
        return b.build();
    }

    /** The {@code key} field of a JSON payload, read as flow-kafka's json source reads it (a Jackson tree). */
    static String keyOf(byte[] json) {
        try {
            return JSON.readTree(json).get("key").asText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JSON output value. */
    record CountOut(String key, long count) {
    }

    /** Counts per key and forwards {@code {"key":..,"count":..}} for every record. */
    static final class CountProcessor implements Processor<String, byte[], String, byte[]> {
        private ProcessorContext<String, byte[]> context;
        private KeyValueStore<String, Long> store;

        @Override
        public void init(ProcessorContext<String, byte[]> context) {
            this.context = context;
            this.store = context.getStateStore(STORE);
        }

        @Override
        public void process(Record<String, byte[]> record) {
            Long previous = store.get(record.key());
            long count = previous == null ? 1 : previous + 1;
            store.put(record.key(), count);
            byte[] value;
            try {
                value = JSON.writeValueAsBytes(new CountOut(record.key(), count));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            context.forward(record.withValue(value));
        }
    }

    private static Running startStreams(Topology topology, String appId, Properties common) {
        Properties p = new Properties();
        p.putAll(common);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        KafkaStreams streams = new KafkaStreams(topology, p);
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("plain app " + appId + ": stream thread died: " + e);
            e.printStackTrace();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        streams.start();
        return new Running() {
            @Override
            public boolean isRunning() {
                return streams.state() == KafkaStreams.State.RUNNING;
            }

            @Override
            public void close() {
                streams.close(Duration.ofSeconds(60));
            }
        };
    }

    // ---- flow-kafka

    /** Payload of the source stream and of the internal stream {@code records}. */
    static final Schema RECORD_SCHEMA = SchemaBuilder.record("Record").namespace("io.flowkafka.benchmarks")
            .fields().requiredString("key").requiredString("pad").endRecord();
    /** Payload of the output stream {@code counts}. */
    static final Schema COUNT_SCHEMA = SchemaBuilder.record("Count").namespace("io.flowkafka.benchmarks")
            .fields().requiredString("key").requiredLong("count").endRecord();
    /** Value of the {@code count} state. */
    static final Schema STATE_SCHEMA = SchemaBuilder.record("CountState").namespace("io.flowkafka.benchmarks")
            .fields().requiredLong("count").endRecord();

    /** The counting pipeline: read (Source, json) -> records -> count (Transform, state) -> KafkaSink (json). */
    static PipelineSpec flowSpec(String name, String input, String output, int partitions) {
        return flowSpec(name, input, output, partitions, "KafkaSink");
    }

    /**
     * The counting pipeline with the given sink class: {@code KafkaSink} (inside the epoch
     * transaction) or {@code TKafkaSink} (through the transactional outbox, delivered exactly once
     * by the outbox service to the same cluster).
     */
    static PipelineSpec flowSpec(String name, String input, String output, int partitions, String sinkClass) {
        return PipelineSpec.builder(name)
                .stream("input", RECORD_SCHEMA)
                .stream("records", RECORD_SCHEMA)
                .stream("counts", COUNT_SCHEMA)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("input", "KafkaSource", Map.of("topics", input, "format", "json"))
                        .outputStreamIds("records"))
                .computation("count", c -> c.inputStreamIds("records")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                        .groupBy("key", ColumnType.STRING, null)
                        .state("count", STATE_SCHEMA)
                        .processingFunction(FlowCounter::new)
                        .outputStreamIds("counts")
                        .sink("out", sinkClass, List.of("counts"),
                                Map.of("topic", output, "format", "json", "key_column", "key"))
                        .desiredPartitionCount(partitions))
                .build();
    }

    /**
     * The counting pipeline in one step: count (Transform, state) reads the input topic, keyed by
     * the counting key, as a key-partitioned source -> KafkaSink (json).
     */
    static PipelineSpec keyedFlowSpec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("input", RECORD_SCHEMA)
                .stream("counts", COUNT_SCHEMA)
                .computation("count", c -> c
                        .source("input", "KafkaSource", Map.of("topics", input, "format", "json", "key_partitioned", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                        .groupBy("key", ColumnType.STRING, null)
                        .state("count", STATE_SCHEMA)
                        .processingFunction(FlowCounter::new)
                        .outputStreamIds("counts")
                        .sink("out", "KafkaSink", List.of("counts"),
                                Map.of("topic", output, "format", "json", "key_column", "key")))
                .build();
    }

    /** Counts per key in state and emits the running count for every message. */
    public static final class FlowCounter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> state = context.getState("count");
            long count = state.get().map(s -> (Long) s.get(0)).orElse(0L) + 1;
            GenericRecord updated = new GenericData.Record(STATE_SCHEMA);
            updated.put(0, count);
            state.set(updated);
            output.addMessage(context.createMessageBuilder("counts")
                    .set("key", context.getKey().get("key"))
                    .set("count", count)
                    .build());
        }
    }

    /** Notes about job starts since the last call (e.g. retried starts), for the run's report; cleared. */
    static String drainStartNotes() {
        synchronized (START_NOTES) {
            String s = String.join("; ", START_NOTES);
            START_NOTES.clear();
            return s;
        }
    }

    private static final List<String> START_NOTES = new java.util.ArrayList<>();
    private static final long SCRAPE_INTERVAL_MS = 5_000;

    private static Running startFlow(PipelineSpec spec, Properties common) {
        return startFlow(spec, common, (MeterRegistry) null);
    }

    /** A registry that denies every meter: flow-kafka's meters (and Kafka Streams' bound ones) are no-ops. */
    private static MeterRegistry deniedMeters() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(MeterFilter.deny());
        return registry;
    }

    /**
     * Starts a flow-kafka job; with {@code prometheus}, its meters go there and a daemon thread scrapes them every
     * {@value #SCRAPE_INTERVAL_MS} ms, as a Prometheus server would (more often than its 15 s default).
     */
    private static Running startFlow(PipelineSpec spec, Properties common, @Nullable MeterRegistry registry) {
        PrometheusMeterRegistry prometheus = registry instanceof PrometheusMeterRegistry p ? p : null;
        FlowRuntime runtime = null;
        for (int attempt = 1; runtime == null; attempt++) {
            FlowRuntime r = registry == null ? FlowRuntime.create(spec, common)
                    : FlowRuntime.create(spec, common, registry);
            try {
                r.start();
                runtime = r;
            } catch (io.flowkafka.api.FlowException e) {
                // FlowRuntime.start describes the topics it has just created; on a busy broker the
                // metadata may not list them yet (UnknownTopicOrPartitionException). Topics exist now.
                r.close();
                if (attempt >= 3 || !(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)) {
                    throw e;
                }
                synchronized (START_NOTES) {
                    START_NOTES.add("FlowRuntime.start failed (" + e.getCause().getMessage() + ") and was retried");
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
        FlowRuntime started = runtime;
        ScheduledExecutorService scraper = null;
        if (prometheus != null) {
            scraper = Executors.newSingleThreadScheduledExecutor(t -> {
                Thread thread = new Thread(t, "bench-prometheus-scrape");
                thread.setDaemon(true);
                return thread;
            });
            scraper.scheduleAtFixedRate(() -> prometheus.scrape(), SCRAPE_INTERVAL_MS, SCRAPE_INTERVAL_MS,
                    TimeUnit.MILLISECONDS);
        }
        ScheduledExecutorService scraping = scraper;
        return new Running() {
            @Override
            public boolean isRunning() {
                return started.state() == FlowRuntime.State.RUNNING;
            }

            @Override
            public void close() {
                if (scraping != null) {
                    scraping.shutdownNow();
                }
                started.stop(Duration.ofSeconds(60));
                started.close();
            }
        };
    }
}
