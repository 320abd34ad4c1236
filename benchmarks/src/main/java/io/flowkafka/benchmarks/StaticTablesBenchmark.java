package io.flowkafka.benchmarks;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableReader;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.connectors.statictable.TableRowIterator;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Static tables (issue 25): the static-table source's read rate and {@code TArrivalOrderTableSink}'s write rate, each
 * against a hand-written Kafka job doing the same work ({@code plain-kafka}, the target ratio >= 0.8x) and against a
 * bare Avro loop over local files ({@code plain}, informational), side by side in one run.
 *
 * <p>Sides: {@code flow} is the flow-kafka job; {@code plain-kafka} is {@link StaticTablesPlainJobs}: for the source a
 * {@code DataFileReader} loop over the same part files producing each row (Avro binary, as KafkaSink writes it) with a
 * transactional producer committing every {@code commit.interval.ms}, for the sink a {@code read_committed} consumer
 * writing a {@code DataFileWriter} table file per period (fsync, rename, then the offsets committed); {@code plain}
 * is the bare loop (read and decode the part files; write one file), which does no Kafka work.
 *
 * <p>This JVM runs the in-JVM broker, writes the tables and the sink's input once, runs the bare loops and measures;
 * each flow-kafka and plain-kafka job runs in a JVM of its own ({@link StaticTablesJobs}), measured the same way:
 * once it runs, until the last row is read {@code read_committed} from the output topic (source) or is in a published
 * file (sink). Every run is checked: the source's output topics (read {@code read_committed}) and the bare reader hold
 * every row once (count and checksum); the sink's tables and files hold every id exactly once (count, bitset and
 * checksum). Summary rows go to {@code RESULTS.md} via {@link ResultsFile#upsertSummaryRows}.
 *
 * <p>Over 700 lines: two halves with three sides each, their checks and one report. The child-JVM launching and
 * report code it shares with EnrichBenchmark and WaitClickVsFlink is to move into one benchmark harness (known
 * duplication); until then it stays here rather than split into single-use pieces.
 */
public final class StaticTablesBenchmark {
    private long rows = 1_000_000;
    private int tables = 10;
    private int partitions = 2;
    private int runs = 3;
    private int rangeRows = 10_000;
    private long commitMs = 100;
    private String jobHeap = "1g";
    private List<String> jobJvmOpts = List.of();
    private List<String> modes = List.of("source", "sink");
    private long timeoutS = 600;
    private Path workDir;
    private Path results = Paths.get("benchmarks/RESULTS.md");
    private final List<String> commandLine = new ArrayList<>();
    private final String stamp = Long.toString(System.currentTimeMillis() % 10_000_000, 36);
    private final List<Process> children = new ArrayList<>();
    private EmbeddedKafkaCluster cluster;
    private long expectedChecksum;

    /** The sides of each half, in the order of the report. */
    static final List<String> SIDES = List.of("flow", "plain-kafka", "plain");

    /** One measured run: rows/s from the start, and once running (from RUNNING / from 20% to 90% of the rows). */
    record Run(String mode, String side, int round, long rows, double seconds, double runningSeconds,
            double steadyRate, double jobCpuS, String check) {
        double rate() {
            return rows / seconds;
        }

        double runningRate() {
            return Double.isNaN(runningSeconds) ? rate() : rows / runningSeconds;
        }

        boolean ok() {
            return check.equals("ok");
        }

        String describe() {
            return String.format(Locale.ROOT, "%,d rows in %.2f s = %,.0f rows/s; once running %,.0f rows/s; 20%%-90%% "
                    + "%,.0f rows/s; CPU %.1f s (flow, plain-kafka: the job JVM; plain: the loop's thread); check %s", rows, seconds, rate(), runningRate(), steadyRate,
                    jobCpuS, check);
        }
    }

    public static void main(String[] args) throws Exception {
        StaticTablesBenchmark b = new StaticTablesBenchmark();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("""
                        options (defaults in parentheses):
                          --rows N              rows in all, both halves (1000000)
                          --tables N            tables the rows are written to for the source half (10)
                          --partitions N        partitions of the source computation and of the sink's input topic (2)
                          --range-rows N        the source's range_row_count and max_rows_per_iteration (10000)
                          --runs N              interleaved rounds, medians reported (3)
                          --commit-interval-ms N commit.interval.ms of the flow jobs (100, the exactly-once default)
                          --modes LIST          of source, sink (source,sink)
                          --job-heap SIZE       -Xms and -Xmx of each job JVM (1g)
                          --job-jvm-opts "OPTS" extra options of every job JVM (JFR, log levels;
                                                -Dstbench.streams.K=V sets Kafka Streams property K)
                          --timeout-s N         bound on one run (600)
                          --work-dir DIR        tables, state and job logs (a new temp directory)
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
                case "--rows" -> b.rows = Long.parseLong(v);
                case "--tables" -> b.tables = Integer.parseInt(v);
                case "--partitions" -> b.partitions = Integer.parseInt(v);
                case "--range-rows" -> b.rangeRows = Integer.parseInt(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--commit-interval-ms" -> b.commitMs = Long.parseLong(v);
                case "--modes" -> b.modes = Stream.of(v.split(",")).map(String::trim).distinct().toList();
                case "--job-heap" -> b.jobHeap = v;
                case "--job-jvm-opts" -> b.jobJvmOpts = v.isBlank() ? List.of() : List.of(v.trim().split("\\s+"));
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
            workDir = Files.createTempDirectory("stbench-");
        }
        Files.createDirectories(workDir);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));
        String loadBefore = CpuSampler.loadAverage();
        System.out.printf(Locale.ROOT, "StaticTablesBenchmark: %,d rows of ~100 bytes, %d tables, %d partitions, "
                        + "range_row_count %d, %d round(s) of %s, commit.interval.ms %d, job heap %s; work dir %s; load "
                        + "average %s; %s; Java %s%n", rows, tables, partitions, rangeRows, runs, modes, commitMs, jobHeap,
                workDir, loadBefore, System.getProperty("bench.built.from", "build unknown"),
                System.getProperty("java.version"));
        expectedChecksum = StaticTablesJobs.expectedChecksum(rows);
        cluster = EmbeddedKafkaCluster.start();
        List<Run> all = new ArrayList<>();
        try {
            Path tablesRoot = modes.contains("source") ? writeTables() : null;
            String input = modes.contains("sink") ? writeSinkInput() : null;
            // warm the bare loops' code in this JVM (the job JVMs are fresh each run and measured once running)
            if (tablesRoot != null) {
                plainRead(tablesRoot, 0);
            }
            if (input != null) {
                plainWrite(0);
            }
            for (int round = 1; round <= runs; round++) {
                for (String mode : modes) {
                    List<String> order = new ArrayList<>(SIDES);
                    Collections.rotate(order, -(round - 1)); // rotate, so that no side always runs first
                    for (String side : order) {
                        Run r = mode.equals("source") ? read(side, tablesRoot, round) : write(side, input, round);
                        all.add(r);
                        System.out.printf("  round %d %-6s %-11s %s%n", round, mode, r.side(), r.describe());
                    }
                }
            }
        } finally {
            cluster.close();
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "Medians over %d round(s); took %.1f min; load average before %s, after %s:%n",
                runs, (System.nanoTime() - started) / 60e9, loadBefore, CpuSampler.loadAverage());
        System.out.println("| half | side | rows/s from start | rows/s once running | rows/s 20%-90% | CPU s (job JVM / loop) | "
                + "checks |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (String mode : modes) {
            for (String side : SIDES) {
                List<Run> rs = of(all, mode, side);
                System.out.printf(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %,.0f | %.1f | %d of %d ok |%n", mode, side,
                        median(rs, Run::rate), median(rs, Run::runningRate), median(rs, Run::steadyRate),
                        median(rs, Run::jobCpuS), rs.stream().filter(Run::ok).count(), rs.size());
            }
        }
        long problems = all.stream().filter(r -> !r.ok()).count();
        List<String> rowsOut = summaryRows(all, problems);
        System.out.println();
        rowsOut.forEach(System.out::println);
        if (results != null && !rowsOut.isEmpty()) {
            ResultsFile.upsertSummaryRows(results, rowsOut);
            System.out.println("updated " + results);
        }
        return problems == 0 ? 0 : 1;
    }

    private List<String> summaryRows(List<Run> all, long problems) {
        List<String> out = new ArrayList<>();
        if (runs <= 0) {
            return out;
        }
        String command = "`benchmarks/run-static-tables.sh"
                + (commandLine.isEmpty() ? "" : " " + String.join(" ", commandLine)) + "`";
        String checked = problems == 0 ? "; every row checked: ok" : "; check problems in " + problems + " run(s)";
        if (modes.contains("source")) {
            double f = median(of(all, "source", "flow"), Run::runningRate);
            double k = median(of(all, "source", "plain-kafka"), Run::runningRate);
            double b = median(of(all, "source", "plain"), Run::rate);
            double fs = median(of(all, "source", "flow"), Run::rate);
            double f2 = median(of(all, "source", "flow"), Run::steadyRate);
            double k2 = median(of(all, "source", "plain-kafka"), Run::steadyRate);
            out.add(String.format(Locale.ROOT, "| static-table source read rate: %s rows (~100-byte Avro rows, deflate "
                            + "level 1) in %d tables; flow-kafka Source computation with StaticTableSource (finite, %d "
                            + "partitions, range_row_count %d) -> KafkaSink (Avro), exactly_once_v2, own JVM, rows/s "
                            + "once RUNNING until the last row is read read_committed vs plain-kafka, a hand-written job "
                            + "in its own JVM: a DataFileReader loop over the same part files producing each row (Avro "
                            + "binary) to a %d-partition topic with a transactional KafkaProducer committing every %d "
                            + "ms, measured alike; median of %d interleaved rounds | %,.0f rows/s | %,.0f rows/s | %.2fx "
                            + "(%s%s; flow %,.0f rows/s counting start-up; from 20%% to 90%% of the rows flow %,.0f vs "
                            + "plain-kafka %,.0f rows/s; informational: vs a bare DataFileReader loop, %,.0f rows/s, "
                            + "%.2fx) | %s | %s |", compact(rows), tables, partitions, rangeRows, partitions, commitMs,
                    runs, f, k, f / k, verdict(f / k), checked, fs, f2, k2, b, f / b, LocalDate.now(), command));
        }
        if (modes.contains("sink")) {
            double f = median(of(all, "sink", "flow"), Run::runningRate);
            double k = median(of(all, "sink", "plain-kafka"), Run::runningRate);
            double b = median(of(all, "sink", "plain"), Run::rate);
            double fs = median(of(all, "sink", "flow"), Run::rate);
            double f2 = median(of(all, "sink", "flow"), Run::steadyRate);
            double k2 = median(of(all, "sink", "plain-kafka"), Run::steadyRate);
            out.add(String.format(Locale.ROOT, "| arrival-order table sink write rate: %s rows (~100-byte Avro) from "
                            + "a %d-partition topic; flow-kafka Source computation (KafkaSource, Avro) -> "
                            + "TArrivalOrderTableSink (table_period %s, tables deflate level 1), exactly_once_v2 "
                            + "(Kafka transactions, commit.interval.ms %d), own JVM, rows/s once RUNNING until every row "
                            + "is in a published table vs plain-kafka, a hand-written at-least-once job in its own JVM: a "
                            + "read_committed KafkaConsumer -> DataFileWriter, a file per %s (deflate level 1), fsync + "
                            + "rename, offsets committed after, measured alike; median of %d interleaved rounds | %,.0f "
                            + "rows/s | %,.0f rows/s | %.2fx (%s%s; flow %,.0f rows/s counting start-up; from 20%% to "
                            + "90%% of the rows flow %,.0f vs plain-kafka %,.0f rows/s; informational: vs a bare "
                            + "DataFileWriter loop writing one file, %,.0f rows/s, %.2fx) | %s | %s |",
                    compact(rows), partitions, StaticTablesJobs.TABLE_PERIOD, commitMs, StaticTablesJobs.TABLE_PERIOD,
                    runs, f, k, f / k, verdict(f / k), checked, fs, f2, k2, b, f / b, LocalDate.now(), command));
        }
        return out;
    }

    private static String verdict(double ratio) {
        return Double.isNaN(ratio) ? "no ratio" : ratio >= 0.8 ? "target >= 0.8x met" : "target >= 0.8x missed";
    }

    // ---- source half

    /** Writes {@code rows} rows, ids 0..rows-1 in order, to {@code tables} tables named by hour (ISO 8601). */
    private Path writeTables() throws IOException {
        Path root = workDir.resolve("tables");
        LocalTablesDirectory dir = LocalTablesDirectory.open(root);
        long t = System.nanoTime();
        long id = 0;
        GenericRecord r = null;
        for (int i = 0; i < tables; i++) {
            long end = rows * (i + 1) / tables;
            Instant ts = Instant.parse("2026-01-01T00:00:00Z").plusSeconds(3600L * i);
            try (StaticTableWriter w = StaticTableWriter.builder(dir, ts.toString(), StaticTablesJobs.ROW)
                    .tableTimestamp(ts).open()) {
                for (; id < end; id++) {
                    r = StaticTablesJobs.row(id, r);
                    w.append(r);
                }
                w.publish();
            }
        }
        long bytes;
        try (Stream<Path> s = Files.walk(root)) {
            bytes = s.filter(p -> p.toString().endsWith(".avro")).mapToLong(p -> p.toFile().length()).sum();
        }
        System.out.printf(Locale.ROOT, "  tables: %,d rows in %d tables under %s, %,d bytes of part files, written in "
                + "%.1f s%n", rows, tables, root, bytes, (System.nanoTime() - t) / 1e9);
        return root;
    }

    private Run plainRead(Path root, int round) throws IOException {
        List<File> files = StaticTablesPlainJobs.partFiles(root);
        long t = System.nanoTime();
        long cpu0 = threadCpu();
        long count = 0;
        long sum = 0;
        GenericDatumReader<GenericRecord> datum = new GenericDatumReader<>(StaticTablesJobs.ROW);
        GenericRecord rec = null;
        for (File f : files) {
            try (DataFileReader<GenericRecord> reader = new DataFileReader<>(f, datum)) {
                while (reader.hasNext()) {
                    rec = reader.next(rec);
                    count++;
                    sum += StaticTablesJobs.hash(rec);
                }
            }
        }
        double s = (System.nanoTime() - t) / 1e9;
        String check = count == rows && sum == expectedChecksum ? "ok"
                : "read " + count + " rows, checksum " + (sum == expectedChecksum ? "ok" : "wrong");
        return new Run("source", "plain", round, count, s, Double.NaN, Double.NaN, (threadCpu() - cpu0) / 1e9, check);
    }

    private Run read(String side, Path root, int round) throws Exception {
        return side.equals("plain") ? plainRead(root, round) : kafkaRead(side, root, round);
    }

    /** The flow job or the plain-kafka job reading the tables to a topic, measured on the topic. */
    private Run kafkaRead(String side, Path root, int round) throws Exception {
        String runId = stamp + "-r" + round + "-source" + (side.equals("flow") ? "" : "-" + side);
        String output = "stb-" + runId + "-out";
        cluster.createTopic(output, partitions);
        Meter meter = new Meter(output);
        Thread m = new Thread(meter, "meter-" + runId);
        m.setDaemon(true);
        m.start();
        JobRun job = runJob(side.equals("flow") ? "source" : "plain-source", runId, root.toString(), output,
                meter::complete);
        meter.stop = true;
        m.join(10_000);
        String check = job.problem != null ? job.problem
                : meter.count == rows && meter.sum == expectedChecksum ? "ok"
                : "read " + meter.count + " rows, checksum " + (meter.sum == expectedChecksum ? "ok" : "wrong");
        return run("source", side, round, job, meter.doneAt, meter.at20, meter.at90, check);
    }

    /** Reads the source's output topic {@code read_committed}: count, checksum, when 20%, 90% and 100% arrived. */
    private final class Meter implements Runnable {
        final String topic;
        volatile boolean stop;
        volatile long count;
        volatile long sum;
        volatile long at20 = -1;
        volatile long at90 = -1;
        volatile long doneAt = -1;

        Meter(String topic) {
            this.topic = topic;
        }

        boolean complete() {
            return doneAt > 0;
        }

        @Override
        public void run() {
            Properties p = OutputMeter.consumerProps(cluster.bootstrapServers());
            GenericDatumReader<GenericRecord> datum = new GenericDatumReader<>(StaticTablesJobs.ROW);
            BinaryDecoder dec = null;
            GenericRecord rec = null;
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
                List<TopicPartition> tps = new ArrayList<>();
                for (int i = 0; i < partitions; i++) {
                    tps.add(new TopicPartition(topic, i));
                }
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
                long extraUntil = Long.MAX_VALUE;
                while (!stop && System.currentTimeMillis() < extraUntil) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        dec = DecoderFactory.get().binaryDecoder(r.value(), dec);
                        rec = datum.read(rec, dec);
                        sum += StaticTablesJobs.hash(rec);
                        long c = ++count;
                        long now = System.currentTimeMillis();
                        if (at20 < 0 && c * 5 >= rows) {
                            at20 = now;
                        }
                        if (at90 < 0 && c * 10 >= rows * 9) {
                            at90 = now;
                        }
                        if (doneAt < 0 && c >= rows) {
                            doneAt = now;
                            extraUntil = now + 1_000; // read on a second: duplicates would show
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                System.out.println("meter failed: " + e);
            }
        }
    }

    // ---- sink half

    /** Produces rows 0..rows-1, Avro binary, spread round-robin over the partitions. */
    private String writeSinkInput() throws Exception {
        String topic = "stb-" + stamp + "-sink-in";
        cluster.createTopic(topic, partitions);
        Properties p = Workload.producerProps(cluster.bootstrapServers());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(128 * 1024));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1"); // README, Caveats
        long t = System.nanoTime();
        GenericDatumWriter<GenericRecord> datum = new GenericDatumWriter<>(StaticTablesJobs.ROW);
        ByteArrayOutputStream buf = new ByteArrayOutputStream(128);
        BinaryEncoder enc = null;
        GenericRecord r = null;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (long id = 0; id < rows; id++) {
                r = StaticTablesJobs.row(id, r);
                buf.reset();
                enc = EncoderFactory.get().directBinaryEncoder(buf, enc);
                datum.write(r, enc);
                producer.send(new ProducerRecord<>(topic, (int) (id % partitions), null, buf.toByteArray()));
            }
            producer.flush();
        }
        System.out.printf(Locale.ROOT, "  sink input: %,d rows in topic %s, produced in %.1f s%n", rows, topic,
                (System.nanoTime() - t) / 1e9);
        return topic;
    }

    private Run plainWrite(int round) throws IOException {
        Path dir = workDir.resolve("plain-sink-r" + round);
        Files.createDirectories(dir);
        File file = dir.resolve("part-00000.avro").toFile();
        long t = System.nanoTime();
        long cpu0 = threadCpu();
        GenericRecord r = null;
        try (FileOutputStream out = new FileOutputStream(file);
                DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<>(StaticTablesJobs.ROW))) {
            w.setCodec(CodecFactory.deflateCodec(1)); // StaticTableWriter's default, which the sink's tables use
            w.create(StaticTablesJobs.ROW, out);
            for (long id = 0; id < rows; id++) {
                r = StaticTablesJobs.row(id, r);
                w.append(r);
            }
            w.flush();
            out.getChannel().force(true); // the sink fsyncs its tables too
        }
        double s = (System.nanoTime() - t) / 1e9;
        double cpu = (threadCpu() - cpu0) / 1e9;
        // check: every id once, checksum
        BitSet seen = new BitSet();
        long count = 0;
        long dup = 0;
        long sum = 0;
        GenericRecord rec = null;
        try (DataFileReader<GenericRecord> reader = new DataFileReader<>(file,
                new GenericDatumReader<>(StaticTablesJobs.ROW))) {
            while (reader.hasNext()) {
                rec = reader.next(rec);
                count++;
                int id = (int) (long) (Long) rec.get("id");
                dup += seen.get(id) ? 1 : 0;
                seen.set(id);
                sum += StaticTablesJobs.hash(rec);
            }
        }
        Files.deleteIfExists(file.toPath());
        String check = count == rows && dup == 0 && seen.cardinality() == rows && sum == expectedChecksum ? "ok"
                : "file holds " + count + " rows, " + dup + " duplicates, checksum "
                        + (sum == expectedChecksum ? "ok" : "wrong");
        return new Run("sink", "plain", round, rows, s, Double.NaN, Double.NaN, cpu, check);
    }

    private Run write(String side, String input, int round) throws Exception {
        return switch (side) {
            case "flow" -> flowWrite(input, round);
            case "plain-kafka" -> plainKafkaWrite(input, round);
            default -> plainWrite(round);
        };
    }

    /** The plain-kafka sink job: table files named with their row counts, measured until every row is published. */
    private Run plainKafkaWrite(String input, int round) throws Exception {
        String runId = stamp + "-r" + round + "-sink-plain-kafka";
        Path out = workDir.resolve(runId + "-files");
        Files.createDirectories(out);
        long[] at = {-1, -1, -1}; // 20%, 90%, 100% of the rows in published files
        JobRun job = runJob("plain-sink", runId, input, out.toString(), () -> {
            long n = StaticTablesPlainJobs.publishedRows(out);
            long now = System.currentTimeMillis();
            if (at[0] < 0 && n * 5 >= rows) {
                at[0] = now;
            }
            if (at[1] < 0 && n * 10 >= rows * 9) {
                at[1] = now;
            }
            if (at[2] < 0 && n >= rows) {
                at[2] = now;
            }
            return n >= rows;
        });
        String check = job.problem != null ? job.problem : checkFiles(out);
        return run("sink", "plain-kafka", round, job, at[2], at[0], at[1], check);
    }

    /** Every id in exactly one published file of the plain-kafka sink, the checksum of all rows. */
    private String checkFiles(Path dir) throws IOException {
        RowCheck c = new RowCheck();
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().startsWith(StaticTablesPlainJobs.TABLE_PREFIX)).toList();
        }
        GenericRecord rec = null;
        for (Path f : files) {
            try (DataFileReader<GenericRecord> reader = new DataFileReader<>(f.toFile(),
                    new GenericDatumReader<>(StaticTablesJobs.ROW))) {
                while (reader.hasNext()) {
                    rec = reader.next(rec);
                    c.add(rec);
                }
            }
        }
        System.out.printf("    plain-kafka sink files: %d%n", files.size());
        return c.ok() ? "ok" : files.size() + " files hold " + c.describe();
    }

    /** Counts rows by id: duplicates, distinct ids, the checksum. */
    private final class RowCheck {
        private final BitSet seen = new BitSet();
        private long count;
        private long dup;
        private long sum;

        void add(GenericRecord rec) {
            count++;
            int id = (int) (long) (Long) rec.get("id");
            dup += seen.get(id) ? 1 : 0;
            seen.set(id);
            sum += StaticTablesJobs.hash(rec);
        }

        boolean ok() {
            return count == rows && dup == 0 && seen.cardinality() == rows && sum == expectedChecksum;
        }

        String describe() {
            return count + " rows, " + dup + " duplicates, " + seen.cardinality() + " distinct ids, checksum "
                    + (sum == expectedChecksum ? "ok" : "wrong");
        }
    }

    private Run flowWrite(String input, int round) throws Exception {
        String runId = stamp + "-r" + round + "-sink";
        Path out = workDir.resolve(runId + "-tables");
        Files.createDirectories(out);
        LocalTablesDirectory dir = LocalTablesDirectory.open(out);
        long[] at = {-1, -1, -1}; // 20%, 90%, 100% of the rows in published tables
        JobRun job = runJob("sink", runId, input, out.toString(), () -> {
            long n = 0;
            try {
                for (String t : dir.tableNames()) {
                    n += dir.attributes(t).rowCount();
                }
            } catch (IOException | RuntimeException e) {
                return false; // a table being published or swept: look again
            }
            long now = System.currentTimeMillis();
            if (at[0] < 0 && n * 5 >= rows) {
                at[0] = now;
            }
            if (at[1] < 0 && n * 10 >= rows * 9) {
                at[1] = now;
            }
            if (at[2] < 0 && n >= rows) {
                at[2] = now;
            }
            return n >= rows;
        });
        String check = job.problem != null ? job.problem : checkTables(dir);
        return run("sink", "flow", round, job, at[2], at[0], at[1], check);
    }

    /** Every id in exactly one table, the checksum of all rows. */
    private String checkTables(LocalTablesDirectory dir) throws IOException {
        BitSet seen = new BitSet();
        long count = 0;
        long dup = 0;
        long sum = 0;
        List<String> names = dir.tableNames();
        for (String t : names) {
            StaticTableReader reader = StaticTableReader.open(dir, t);
            try (TableRowIterator it = reader.rows(0, reader.rowCount())) {
                while (it.hasNext()) {
                    GenericRecord rec = it.next();
                    count++;
                    int id = (int) (long) (Long) rec.get("id");
                    dup += seen.get(id) ? 1 : 0;
                    seen.set(id);
                    sum += StaticTablesJobs.hash(rec);
                }
            }
        }
        boolean ok = count == rows && dup == 0 && seen.cardinality() == rows && sum == expectedChecksum;
        System.out.printf("    sink tables: %d%n", names.size());
        return ok ? "ok"
                : names.size() + " tables hold " + count + " rows, " + dup + " duplicates, " + seen.cardinality()
                        + " distinct ids, checksum " + (sum == expectedChecksum ? "ok" : "wrong");
    }

    // ---- job JVMs

    private record JobRun(long launch, long t0, long running, long end, double jobCpuS, String problem) {
    }

    private JobRun runJob(String mode, String runId, String from, String to, java.util.function.BooleanSupplier done)
            throws Exception {
        Path runDir = workDir.resolve(runId);
        Files.createDirectories(runDir.resolve("tmp"));
        Path log = workDir.resolve(runId + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + jobHeap);
        cmd.add("-Xmx" + jobHeap);
        cmd.add("-Djava.io.tmpdir=" + runDir.resolve("tmp"));
        cmd.addAll(jobJvmOpts);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), StaticTablesJobs.class.getName(), mode,
                cluster.bootstrapServers(), "stb-" + runId, from, to, runDir.resolve("state").toString(),
                Integer.toString(partitions), Long.toString(commitMs), Integer.toString(rangeRows)));
        long launch = System.currentTimeMillis();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        children.add(p);
        AtomicReference<Long> t0 = new AtomicReference<>(-1L);
        AtomicReference<Long> running = new AtomicReference<>(-1L);
        AtomicReference<Boolean> failed = new AtomicReference<>(false);
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
                        t0.set(Long.parseLong(line.substring(3).trim()));
                    } else if (line.startsWith("RUNNING ")) {
                        running.compareAndSet(-1L, Long.parseLong(line.substring(8).trim()));
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
        long jobCpu = -1;
        boolean complete = false;
        while (!(complete = done.getAsBoolean()) && System.currentTimeMillis() < deadline && p.isAlive()
                && !failed.get()) {
            Thread.sleep(50); // polling the meter / the output directory
            long ticks = procCpuTicks(p.pid());
            jobCpu = ticks >= 0 ? ticks : jobCpu;
        }
        long end = System.currentTimeMillis();
        long ticks = procCpuTicks(p.pid());
        jobCpu = ticks >= 0 ? ticks : jobCpu;
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
        String problem = complete ? null
                : (failed.get() ? "job FAILED" : p.isAlive() ? "timed out" : "job exited " + p.exitValue())
                        + "; log " + log;
        if (problem == null && !finished.get().equals("ok")) {
            problem = "job finished " + finished.get() + "; log " + log;
        }
        if (problem != null) {
            tail(log);
        } else {
            deleteTree(runDir);
        }
        return new JobRun(launch, t0.get(), running.get(), end, jobCpu / 100.0, problem);
    }

    private Run run(String mode, String side, int round, JobRun job, long doneAt, long at20, long at90,
            String check) {
        long t0 = job.t0() > 0 ? job.t0() : job.launch();
        long end = doneAt > 0 ? doneAt : job.end();
        double seconds = (end - t0) / 1e3;
        double runningSeconds = job.running() > 0 ? (end - job.running()) / 1e3 : Double.NaN;
        double steady = at20 > 0 && at90 > at20 ? rows * 0.7 / ((at90 - at20) / 1e3) : Double.NaN;
        return new Run(mode, side, round, rows, seconds, runningSeconds, steady, job.jobCpuS(), check);
    }

    // ---- helpers

    private static List<Run> of(List<Run> all, String mode, String side) {
        return all.stream().filter(r -> r.mode().equals(mode) && r.side().equals(side)).toList();
    }

    private static double median(List<Run> rs, ToDoubleFunction<Run> f) {
        double[] v = rs.stream().mapToDouble(f).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String compact(long n) {
        return n % 1_000_000 == 0 ? n / 1_000_000 + "M" : n % 1_000 == 0 ? n / 1_000 + "k" : Long.toString(n);
    }

    private static long threadCpu() {
        return java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    private static long procCpuTicks(long pid) {
        try {
            String stat = Files.readString(Paths.get("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static void tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            System.out.println("  --- last lines of " + log);
            lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(l -> System.out.println("  | " + l));
        } catch (IOException e) {
            System.out.println("  (no log " + log + ")");
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
