package io.flowkafka.benchmarks;

import io.flowkafka.connectors.statictable.StaticTableSource;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The static-table benchmark's rows and its two flow-kafka pipelines, and the job JVM that runs one of them.
 *
 * <pre>
 *   source: StaticTableSource (tables_path, finite) -> read (Source, identity) -> KafkaSink (Avro binary)
 *   sink:   KafkaSource (Avro binary) -> read (Source, identity) -> TArrivalOrderTableSink (table_period 1s)
 * </pre>
 */
public final class StaticTablesJobs {
    /** A row: about 100 bytes encoded (id, a 7-character key, an 88-character pad). */
    static final Schema ROW = SchemaBuilder.record("Row").namespace("io.flowkafka.benchmarks.statictables").fields()
            .requiredLong("id").requiredString("key").requiredString("pad").endRecord();
    static final int PAD_CHARS = 88;
    /** The sink's table period: tables close by time, one a second, no row or weight limit. */
    static final String TABLE_PERIOD = "1s";

    private StaticTablesJobs() {
    }

    /** Row {@code id}, the same on every side of the benchmark. */
    static GenericRecord row(long id, GenericRecord reuse) {
        GenericRecord r = reuse != null ? reuse : new GenericData.Record(ROW);
        r.put("id", id);
        r.put("key", "k" + (100_000 + id % 100_000));
        r.put("pad", pad(id));
        return r;
    }

    private static String pad(long id) {
        // varied enough that deflate does not reduce it to nothing: the id's hex digits and a rotating letter
        StringBuilder sb = new StringBuilder(PAD_CHARS);
        String hex = Long.toHexString(id * 0x9E3779B97F4A7C15L);
        while (sb.length() < PAD_CHARS) {
            sb.append(hex).append((char) ('a' + sb.length() % 26));
        }
        sb.setLength(PAD_CHARS);
        return sb.toString();
    }

    /** A row's contribution to a checksum: reads every field of the decoded row. */
    static long hash(GenericRecord r) {
        long id = (Long) r.get("id");
        return id * 0x9E3779B97F4A7C15L + 31L * r.get("key").toString().hashCode() + r.get("pad").toString().hashCode();
    }

    /** The checksum of rows {@code 0..n-1}. */
    static long expectedChecksum(long n) {
        long sum = 0;
        GenericRecord r = null;
        for (long i = 0; i < n; i++) {
            r = row(i, r);
            sum += hash(r);
        }
        return sum;
    }

    static PipelineSpec sourceSpec(String name, String tablesPath, String output, int partitions, int rangeRows) {
        return PipelineSpec.builder(name).stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).desiredPartitionCount(partitions)
                        .source("raw", StaticTableSource.FLOW_NAME, Map.of("tables_path", tablesPath, "finite", true,
                                "range_row_count", rangeRows, "max_rows_per_iteration", rangeRows))
                        .outputStreamIds("rows")
                        .sink("out", "KafkaSink", List.of("rows"), Map.of("topic", output, "format", "avro")))
                .build();
    }

    static PipelineSpec sinkSpec(String name, String input, String outputDirectory) {
        return PipelineSpec.builder(name).stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input, "format", "avro"))
                        .outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), Map.of(
                                "output_directory", outputDirectory, "table_period", TABLE_PERIOD,
                                "table_ttl", "1h", "format", "avro")))
                .build();
    }

    /**
     * A job JVM. Arguments: {@code source|sink bootstrap pipeline tablesPathOrInputTopic outputTopicOrDirectory
     * stateDir partitions commitIntervalMs rangeRows}. Prints {@code T0 <epoch ms>} just before the runtime starts,
     * {@code RUNNING <epoch ms>} once running, {@code FAILED <epoch ms>} if it fails; runs until a line {@code stop}
     * on standard input, then prints {@code FINISHED <ok|state> <epoch ms>}. System properties
     * {@code stbench.streams.<property>} are added to the Kafka Streams properties.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 9) {
            System.err.println("usage: StaticTablesJobs source|sink|plain-source|plain-sink bootstrap pipeline "
                    + "tablesPath|inputTopic outputTopic|outputDirectory stateDir partitions commitIntervalMs rangeRows");
            System.exit(2);
        }
        if (args[0].startsWith("plain-")) {
            plain(args);
            return;
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[5]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[7]);
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("stbench.streams.")) {
                props.put(name.substring("stbench.streams.".length()), System.getProperty(name));
            }
        }
        int partitions = Integer.parseInt(args[6]);
        PipelineSpec spec = switch (args[0]) {
            case "source" -> sourceSpec(args[2], args[3], args[4], partitions, Integer.parseInt(args[8]));
            case "sink" -> sinkSpec(args[2], args[3], args[4]);
            default -> throw new IllegalArgumentException("job " + args[0]);
        };
        print("T0");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Thread watch = watch(runtime);
            awaitStop();
            watch.interrupt();
            FlowRuntime.State state = runtime.state();
            boolean ok = state == FlowRuntime.State.RUNNING || state == FlowRuntime.State.COMPLETED;
            runtime.stop(Duration.ofSeconds(60));
            print("FINISHED " + (ok ? "ok" : state));
            System.exit(ok ? 0 : 1);
        }
    }

    /** A hand-written job ({@link StaticTablesPlainJobs}): the same protocol on standard input and output. */
    private static void plain(String[] args) throws InterruptedException {
        print("T0");
        AtomicBoolean stop = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try {
                awaitStop();
            } catch (IOException e) {
                // the driver went away
            }
            stop.set(true);
        }, "stbench-stdin");
        stdin.setDaemon(true);
        stdin.start();
        try {
            if (args[0].equals("plain-source")) {
                StaticTablesPlainJobs.source(args[1], args[2], args[3], args[4], Long.parseLong(args[7]),
                        () -> print("RUNNING"));
            } else if (args[0].equals("plain-sink")) {
                StaticTablesPlainJobs.sink(args[1], args[2], args[3], args[4], Integer.parseInt(args[6]),
                        Duration.parse("PT" + TABLE_PERIOD.toUpperCase(Locale.ROOT)).toMillis(),
                        () -> print("RUNNING"), stop::get);
            } else {
                throw new IllegalArgumentException("job " + args[0]);
            }
        } catch (IOException | RuntimeException e) {
            print("FAILED");
            e.printStackTrace();
            System.exit(1);
        }
        stdin.join();
        print("FINISHED ok");
        System.exit(0);
    }

    private static Thread watch(FlowRuntime runtime) {
        Thread t = new Thread(() -> {
            boolean seen = false;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    FlowRuntime.State s = runtime.state();
                    if (!seen && (s == FlowRuntime.State.RUNNING || s == FlowRuntime.State.COMPLETED)) {
                        print("RUNNING");
                        seen = true;
                    }
                    if (s == FlowRuntime.State.FAILED) {
                        print("FAILED");
                        return;
                    }
                    Thread.sleep(20); // a job JVM's watcher polling a state, not a test waiting
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stbench-watch");
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
