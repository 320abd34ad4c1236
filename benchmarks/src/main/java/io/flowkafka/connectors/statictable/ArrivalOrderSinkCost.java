package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.StagedSinkWriter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.FileOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The arrival-order sink's own cost, without Kafka: one thread writes Avro rows of two partitions to the sink's
 * writer in epochs of a batch per partition (staged, then made visible) and publishes tables every few batches, against a plain {@code DataFileWriter}
 * loop (deflate level 1, fsync) over the same rows. In this package for the engine's package-private API.
 *
 * <pre>
 * java -cp "benchmarks/target/classes:benchmarks/target/lib/*" \
 *     io.flowkafka.connectors.statictable.ArrivalOrderSinkCost [rows 200000] [batch 1000] [publishEvery 20] [rounds 3]
 * </pre>
 */
public final class ArrivalOrderSinkCost {
    /** The rows of {@code StaticTablesJobs}: about 100 bytes encoded. */
    static final Schema ROW = SchemaBuilder.record("Row").namespace("io.flowkafka.benchmarks.statictables").fields()
            .requiredLong("id").requiredString("key").requiredString("pad").endRecord();

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ArrivalOrderSinkCost() {
    }

    static GenericRecord row(long id, GenericRecord r) {
        r.put("id", id);
        r.put("key", "k" + (100_000 + id % 100_000));
        StringBuilder sb = new StringBuilder(88);
        String hex = Long.toHexString(id * 0x9E3779B97F4A7C15L);
        while (sb.length() < 88) {
            sb.append(hex).append((char) ('a' + sb.length() % 26));
        }
        sb.setLength(88);
        r.put("pad", sb.toString());
        return r;
    }

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
        int publishEvery = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        RowEncoder encoder = new RowEncoder(ROW);
        List<byte[]> values = new ArrayList<>(rows);
        GenericRecord r = new GenericData.Record(ROW);
        for (long i = 0; i < rows; i++) {
            values.add(encoder.encode(row(i, r)));
        }
        for (int round = 0; round < rounds; round++) {
            Path work = Files.createTempDirectory("sink-cost");
            double plain = plain(work.resolve("plain.avro"), rows);
            long t = System.nanoTime();
            long cpu = THREADS.getCurrentThreadCpuTime();
            long written = sink(work.resolve("tables"), values, batch, publishEvery);
            double sink = (System.nanoTime() - t) / 1e9;
            double sinkCpu = (THREADS.getCurrentThreadCpuTime() - cpu) / 1e9;
            System.out.printf(Locale.ROOT, "round %d: plain %,.0f rows/s, sink %,.0f rows/s (%.2fx); sink CPU %.2f s = "
                    + "%.1f us/row of %.2f s wall (the rest waits, mostly on fsync)%s%n", round, rows / plain, rows / sink,
                    plain / sink, sinkCpu, sinkCpu * 1e6 / rows, sink, written == rows ? ""
                            : "; ROWS MISSING: " + written);
        }
    }

    private static double plain(Path file, int rows) throws Exception {
        long t = System.nanoTime();
        GenericRecord r = new GenericData.Record(ROW);
        try (FileOutputStream out = new FileOutputStream(file.toFile());
                DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<>(ROW))) {
            w.setCodec(CodecFactory.deflateCodec(1));
            w.create(ROW, out);
            for (long i = 0; i < rows; i++) {
                w.append(row(i, r));
            }
            w.flush();
            out.getChannel().force(true);
        }
        return (System.nanoTime() - t) / 1e9;
    }

    /** Writes every row in epochs of a batch per partition and publishes; returns the rows in the tables. */
    private static long sink(Path tables, List<byte[]> values, int batch, int publishEvery) throws Exception {
        SinkSpec spec = new SinkSpec("tables", "TArrivalOrderTableSink", List.of("rows"), Map.of("output_directory",
                tables.toString(), "table_period", "1s", "table_ttl", "1h", "format", "avro"));
        SinkContext context = new SinkContext("cost", "cost", "read", spec, Map.of(), Map.of("tick.ms", "3600000"),
                new SimpleMeterRegistry(), "cost.dlq", Map.of("rows", ROW));
        Instant far = Instant.now().plus(Duration.ofDays(1)); // every publish closes the open slot by time
        try (StagedSinkWriter writer = new ArrivalOrderSinkProvider().createWriter(context)) {
            ArrivalOrderTableSink publisher = new ArrivalOrderTableSink(LocalTablesDirectory.open(tables),
                    new ArrivalOrderSinkParameters(Duration.ofSeconds(1), Duration.ofHours(1), null, null), ROW,
                    new SinkProgress.Owner("cost", "read", "tables"));
            writer.open(0, null);
            writer.open(1, null);
            int batches = 0;
            for (int from = 0; from < values.size(); from += 2 * batch) {
                for (int p = 0; p < 2; p++) {
                    for (int i = from + p; i < Math.min(values.size(), from + 2 * batch); i += 2) {
                        writer.write(p, new OutboxRecord(i / 2, MessageId.of(ByteBuffer.allocate(8).putLong(i).array()),
                                null, values.get(i), new RecordHeaders(), 0, i));
                    }
                    byte[] epoch = writer.prepare(p);
                    if (epoch != null) {
                        writer.committed(p, epoch);
                    }
                }
                if (++batches % publishEvery == 0) {
                    publisher.publish(far, null);
                }
            }
            while (!publisher.publish(far, null).isEmpty()) {
                // the rest
            }
        }
        LocalTablesDirectory dir = LocalTablesDirectory.open(tables);
        long n = 0;
        for (String name : dir.tableNames()) {
            n += dir.attributes(name).rowCount();
        }
        return n;
    }
}
