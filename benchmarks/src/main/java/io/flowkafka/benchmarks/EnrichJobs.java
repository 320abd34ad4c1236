package io.flowkafka.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.ExternalTables;
import io.flowkafka.spec.PipelineSpec;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The enrich workload and its jobs (issue 24): events keyed by a reference key, each enriched with
 * the reference table's row of its key and written to an output topic, as JSON.
 *
 * <p>Data. The reference table has {@code keys} rows, key {@code k<i>} (UTF-8), value the Avro binary
 * (no header, no registry) of {@link #REF_SCHEMA}: {@code name = "name-<i>"}, {@code category =
 * "c<i % 50>"}, {@code score = i * 7 % 1000}, {@code info} padding to ~100 bytes. An event is JSON
 * {@code {"id":N,"key":"k<i>","amount":A,"pad":"xx.."}} of {@code valueBytes} bytes keyed by its
 * key; the output {@code {"id":..,"key":..,"amount":..,"name":..,"category":..,"score":..}} keyed by
 * the key, with {@code null} enrichment fields when the key has no row (the check counts those).
 *
 * <p>Jobs, each run by {@link #main} in a JVM of its own:
 * <ul>
 *   <li>{@code plain-global}: Kafka Streams DSL, the events stream left-joined with a
 *       {@code GlobalKTable} over the reference topic (RocksDB, the default), one sub-topology;
 *       the joiner parses the event JSON (Jackson tree), decodes the row's Avro and writes JSON.</li>
 *   <li>{@code plain-table}: the same join with a co-partitioned {@code KTable} (the reference topic
 *       has the events' partition count and partitioner), {@code topology.optimization=all} so the
 *       table's store restores from the reference topic itself.</li>
 *   <li>{@code flow}: a flow-kafka Transform reading the events topic as a key-partitioned source,
 *       grouped by {@code farm_hash(key), key} (the manager's key), with an
 *       {@code external_state_joiner} {@code /reference} over the table topic the loader wrote
 *       (global store) -> KafkaSink (json); one sub-topology, like the plain jobs.</li>
 *   <li>{@code flow-two-hop}: the Flow-shaped pipeline: a Source computation -> internal stream ->
 *       the same Transform with its joiner -> KafkaSink.</li>
 *   <li>{@code load} (not measured): the loader, a Transform reading the reference topic (finite,
 *       Avro) with an {@code external_state_manager} {@code /reference} that sets each row, so that
 *       the runtime writes the table topic in its own format (encoded group-by key, Avro row); it
 *       runs to completion before the measured runs.</li>
 * </ul>
 * Every job runs with flow-kafka's settings: {@code exactly_once_v2}, the given stream threads and
 * {@code commit.interval.ms}, producer {@code batch.size=262144} and {@code compression.type=lz4}.
 */
public final class EnrichJobs {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The reference row. */
    public static final Schema REF_SCHEMA = SchemaBuilder.record("Reference").namespace("io.flowkafka.benchmarks")
            .fields().requiredString("key").requiredString("name").requiredString("category").requiredLong("score")
            .requiredString("info").endRecord();
    /** The event (the JSON source's schema). */
    static final Schema EVENT_SCHEMA = SchemaBuilder.record("Event").namespace("io.flowkafka.benchmarks")
            .fields().requiredLong("id").requiredString("key").requiredLong("amount").requiredString("pad")
            .endRecord();
    /** The enriched event. */
    static final Schema ENRICHED_SCHEMA = SchemaBuilder.record("Enriched").namespace("io.flowkafka.benchmarks")
            .fields().requiredLong("id").requiredString("key").requiredLong("amount").optionalString("name")
            .optionalString("category").optionalLong("score").endRecord();
    /** The joiner's and the manager's name. */
    static final String TABLE = "/reference";
    /** The loader pipeline's manager writes the table to its default topic: {@code <loader>.external.reference}. */
    static String tableTopic(String loaderPipeline) {
        return ExternalTables.defaultTopic(loaderPipeline, TABLE);
    }

    private static final GenericDatumReader<GenericRecord> REF_READER = new GenericDatumReader<>(REF_SCHEMA);
    private static final int REF_INFO_CHARS = 64;

    private EnrichJobs() {
    }

    // ---- data

    static String key(int i) {
        return "k" + i;
    }

    static String expectedName(int i) {
        return "name-" + i;
    }

    static long expectedScore(int i) {
        return i * 7L % 1000;
    }

    /** The reference row of key {@code i}. */
    static GenericRecord referenceRow(int i) {
        GenericRecord r = new GenericData.Record(REF_SCHEMA);
        r.put("key", key(i));
        r.put("name", expectedName(i));
        r.put("category", "c" + (i % 50));
        r.put("score", expectedScore(i));
        r.put("info", "i".repeat(REF_INFO_CHARS));
        return r;
    }

    /** Avro binary of a reference row, as the reference topic holds it. */
    static byte[] encodeRow(GenericRecord row) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(128);
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<GenericRecord>(REF_SCHEMA).write(row, enc);
            enc.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JSON event {@code id} of key {@code k}, padded to {@code valueBytes}. */
    static byte[] eventJson(long id, int k, long amount, int valueBytes) {
        String head = "{\"id\":" + id + ",\"key\":\"" + key(k) + "\",\"amount\":" + amount + ",\"pad\":\"";
        int pad = Math.max(0, valueBytes - head.length() - 2);
        return (head + "x".repeat(pad) + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    // ---- plain Kafka Streams

    /** The JSON output value. */
    record EnrichedOut(long id, String key, long amount, @Nullable String name, @Nullable String category,
            @Nullable Long score) {
    }

    /** Joins one event (JSON) with its reference row (Avro binary, or null): the enriched JSON. */
    static byte[] enrich(byte[] eventJson, byte @Nullable [] row) {
        try {
            JsonNode e = JSON.readTree(eventJson);
            String name = null;
            String category = null;
            Long score = null;
            if (row != null) {
                GenericRecord r = REF_READER.read(null, DecoderFactory.get().binaryDecoder(row, null));
                name = r.get("name").toString();
                category = r.get("category").toString();
                score = (Long) r.get("score");
            }
            return JSON.writeValueAsBytes(new EnrichedOut(e.get("id").asLong(), e.get("key").asText(),
                    e.get("amount").asLong(), name, category, score));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Events left-joined with a GlobalKTable over the reference topic. */
    static Topology globalTopology(String events, String reference, String output) {
        StreamsBuilder b = new StreamsBuilder();
        GlobalKTable<String, byte[]> ref = b.globalTable(reference, Consumed.with(Serdes.String(), Serdes.ByteArray()),
                Materialized.as(Stores.persistentKeyValueStore("reference")));
        b.stream(events, Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .leftJoin(ref, (k, v) -> k, EnrichJobs::enrich)
                .to(output, Produced.with(Serdes.String(), Serdes.ByteArray()));
        return b.build();
    }

    /** Events left-joined with a co-partitioned KTable over the reference topic (its source topic as changelog). */
    static Topology tableTopology(String events, String reference, String output, Properties props) {
        StreamsBuilder b = new StreamsBuilder();
        KTable<String, byte[]> ref = b.table(reference, Consumed.with(Serdes.String(), Serdes.ByteArray()),
                Materialized.as(Stores.persistentKeyValueStore("reference")));
        KStream<String, byte[]> in = b.stream(events, Consumed.with(Serdes.String(), Serdes.ByteArray()));
        in.leftJoin(ref, EnrichJobs::enrich).to(output, Produced.with(Serdes.String(), Serdes.ByteArray()));
        return b.build(props);
    }

    // ---- flow-kafka

    /** The loader: the reference topic (Avro, finite) -> a Transform whose manager {@code /reference} sets each row. */
    static PipelineSpec loaderSpec(String name, String reference) {
        return PipelineSpec.builder(name)
                .stream("reference", REF_SCHEMA)
                .computation("load", c -> keyedLikeTheTable(c
                        .source("reference", "KafkaSource", Map.of("topics", reference, "format", "avro",
                                "key_partitioned", true, "finite", true)))
                        .externalStateManager(ExternalStateManagerSpec.of(TABLE, REF_SCHEMA))
                        .processingFunction(Loader::new))
                .build();
    }

    /**
     * The enrich pipeline: a Transform grouped like the table with a joiner of {@code tableTopic}, reading the
     * events topic as a key-partitioned source ({@code twoHop} false) or behind a Source computation and an
     * internal stream ({@code twoHop} true), -> KafkaSink (json). {@code cacheTtl}: the joiner's
     * {@code parameters.cache.ttl}, null for none (Flow's default: every lookup reads the table).
     */
    static PipelineSpec flowSpec(String name, String events, String tableTopic, String output, int partitions,
            boolean twoHop, @Nullable Duration cacheTtl) {
        ExternalStateJoinerSpec joiner = ExternalStateJoinerSpec.of(TABLE).withTopic(tableTopic, REF_SCHEMA);
        ExternalStateJoinerSpec withTtl = cacheTtl == null ? joiner : joiner.withCacheTtl(cacheTtl);
        PipelineSpec.Builder b = PipelineSpec.builder(name)
                .stream("events", EVENT_SCHEMA)
                .stream("enriched", ENRICHED_SCHEMA);
        Map<String, Object> source = Map.of("topics", events, "format", "json");
        if (twoHop) {
            b.stream("keyed_events", EVENT_SCHEMA)
                    .computation("read", c -> c.kind(ComputationKind.SOURCE)
                            .source("events", "KafkaSource", source)
                            .outputStreamIds("keyed_events"));
        }
        return b.computation("enrich", c -> {
            if (twoHop) {
                c.inputStreamIds("keyed_events").desiredPartitionCount(partitions);
            } else {
                Map<String, Object> keyed = new java.util.HashMap<>(source);
                keyed.put("key_partitioned", true);
                c.source("events", "KafkaSource", keyed);
            }
            keyedLikeTheTable(c)
                    .externalStateJoiner(withTtl)
                    .processingFunction(FlowEnricher::new)
                    .outputStreamIds("enriched")
                    .sink("out", "KafkaSink", List.of("enriched"),
                            Map.of("topic", output, "format", "json", "key_column", "key"));
        }).build();
    }

    /** The group-by key of the manager and of the joiner's computation: the same, so that their bytes match. */
    private static ComputationSpec.Builder keyedLikeTheTable(ComputationSpec.Builder c) {
        return c.groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null);
    }

    /** Sets the current key's row of the managed table to the message. */
    public static final class Loader implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord in = message.getPayload();
            GenericRecord row = new GenericData.Record(REF_SCHEMA);
            for (Schema.Field f : REF_SCHEMA.getFields()) {
                row.put(f.pos(), in.get(f.name()));
            }
            context.getExternalState(TABLE).set(row);
        }
    }

    /** Emits the event with its reference row's fields (null when the key has no row). */
    public static final class FlowEnricher implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord e = message.getPayload();
            Optional<GenericRecord> row = context.getExternalState(TABLE).get();
            output.addMessage(context.createMessageBuilder("enriched")
                    .set("id", e.get("id"))
                    .set("key", e.get("key"))
                    .set("amount", e.get("amount"))
                    .set("name", row.map(r -> r.get("name")).orElse(null))
                    .set("category", row.map(r -> r.get("category")).orElse(null))
                    .set("score", row.map(r -> r.get("score")).orElse(null))
                    .build());
        }
    }

    // ---- the job JVM

    /** The jobs. */
    enum Job {
        FLOW("flow"), FLOW_TWO_HOP("flow-two-hop"), PLAIN_GLOBAL("plain-global"), PLAIN_TABLE("plain-table");

        final String label;

        Job(String label) {
            this.label = label;
        }

        boolean isFlow() {
            return this == FLOW || this == FLOW_TWO_HOP;
        }

        static Job parse(String s) {
            for (Job j : values()) {
                if (j.label.equals(s)) {
                    return j;
                }
            }
            throw new IllegalArgumentException("unknown job '" + s + "': use flow, flow-two-hop, plain-global or "
                    + "plain-table");
        }
    }

    /**
     * A job JVM. Arguments: {@code job bootstrap applicationId eventsTopic referenceTopic tableTopic outputTopic
     * stateDir partitions streamThreads commitIntervalMs}; job {@code load} (the loader: applicationId is the
     * pipeline name, eventsTopic and outputTopic unused) runs to completion and exits 0 when it completed; the others
     * print {@code T0 <epoch ms>} just before they start, {@code RUNNING <epoch ms>} once running, and run until a
     * line {@code stop} (or the end) on standard input, then close and print {@code FINISHED <ok|state> <epoch ms>}.
     * System properties {@code enrich.streams.<property>} are added to the Kafka Streams properties of every job;
     * {@code enrich.flow.cache.ttl} (ISO-8601, e.g. {@code PT1M}) sets the flow jobs' joiner cache TTL.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 11) {
            System.err.println("usage: EnrichJobs load|flow|flow-two-hop|plain-global|plain-table bootstrap "
                    + "applicationId eventsTopic referenceTopic tableTopic outputTopic stateDir partitions "
                    + "streamThreads commitIntervalMs");
            System.exit(2);
        }
        String bootstrap = args[1];
        String appId = args[2];
        String events = args[3];
        String reference = args[4];
        String table = args[5];
        String output = args[6];
        int partitions = Integer.parseInt(args[8]);
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[7]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args[9]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[10]);
        if (args[0].equals("load")) {
            System.exit(load(loaderSpec(appId, reference), props) ? 0 : 1);
        }
        Job job = Job.parse(args[0]);
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("enrich.streams.")) {
                props.put(name.substring("enrich.streams.".length()), System.getProperty(name));
            }
        }
        String ttl = System.getProperty(CACHE_TTL_PROPERTY);
        System.exit(job.isFlow() ? runFlow(flowSpec(appId, events, table, output, partitions, job == Job.FLOW_TWO_HOP,
                ttl == null || ttl.isBlank() ? null : Duration.parse(ttl)), props)
                : runPlain(job, appId, events, reference, output, props));
    }

    /** System property of the job JVMs: the flow jobs' joiner cache TTL (ISO-8601); none when absent. */
    static final String CACHE_TTL_PROPERTY = "enrich.flow.cache.ttl";

    private static boolean load(PipelineSpec spec, Properties props) throws InterruptedException {
        long t = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            boolean ok = runtime.awaitCompletion(Duration.ofMinutes(20));
            System.out.printf(Locale.ROOT, "LOADED %s %s in %.1f s%n", ok ? "COMPLETED" : runtime.state(),
                    spec.name(), (System.nanoTime() - t) / 1e9);
            return ok;
        }
    }

    private static int runFlow(PipelineSpec spec, Properties props) throws IOException, InterruptedException {
        print("T0");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Thread watch = watch(() -> runtime.state() == FlowRuntime.State.RUNNING,
                    () -> runtime.state() == FlowRuntime.State.FAILED);
            awaitStop();
            watch.interrupt();
            String state = String.valueOf(runtime.state());
            runtime.stop(Duration.ofSeconds(60));
            print("FINISHED " + (state.equals("RUNNING") ? "ok" : state));
            return state.equals("RUNNING") ? 0 : 1;
        }
    }

    private static int runPlain(Job job, String appId, String events, String reference, String output,
            Properties common) throws IOException, InterruptedException {
        Properties props = new Properties();
        props.putAll(common);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // flow-kafka's producer defaults (FlowRuntime), so that the comparison measures flow-kafka, not Kafka's
        // producer defaults (16 KiB batches, uncompressed)
        props.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), "262144");
        props.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        Topology topology;
        if (job == Job.PLAIN_GLOBAL) {
            topology = globalTopology(events, reference, output);
        } else {
            props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
            topology = tableTopology(events, reference, output, props);
        }
        print("T0");
        try (KafkaStreams streams = new KafkaStreams(topology, props)) {
            streams.setUncaughtExceptionHandler(e -> {
                System.out.println("stream thread died: " + e);
                e.printStackTrace(System.out);
                return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                        .SHUTDOWN_CLIENT;
            });
            streams.start();
            Thread watch = watch(() -> streams.state() == KafkaStreams.State.RUNNING,
                    () -> streams.state() == KafkaStreams.State.ERROR
                            || streams.state() == KafkaStreams.State.PENDING_ERROR);
            awaitStop();
            watch.interrupt();
            KafkaStreams.State state = streams.state();
            streams.close(Duration.ofSeconds(60));
            boolean ok = state == KafkaStreams.State.RUNNING || state == KafkaStreams.State.REBALANCING;
            print("FINISHED " + (ok ? "ok" : state));
            return ok ? 0 : 1;
        }
    }

    /** Prints {@code RUNNING <ms>} the first time {@code running} holds, {@code FAILED <ms>} if {@code failed} does. */
    private static Thread watch(java.util.function.BooleanSupplier running, java.util.function.BooleanSupplier failed) {
        Thread t = new Thread(() -> {
            boolean seen = false;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    if (!seen && running.getAsBoolean()) {
                        print("RUNNING");
                        seen = true;
                    }
                    if (failed.getAsBoolean()) {
                        print("FAILED");
                        return;
                    }
                    Thread.sleep(20); // a job JVM's watcher polling a state, not a test waiting
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "enrich-watch");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void awaitStop() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("stop")) {
                return;
            }
        }
    }

    private static void print(String what) {
        System.out.println(what + " " + System.currentTimeMillis());
        System.out.flush();
    }
}
