package io.flowkafka.benchmarks;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;
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
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The static-table benchmark's hand-written Kafka jobs, the fair baselines of the flow-kafka jobs ({@code plain-kafka}):
 * the same work without the library, run in a job JVM of their own like the flow jobs.
 *
 * <pre>
 *   plain-source: DataFileReader over every part file, in table order -> transactional KafkaProducer (Avro binary of
 *                 each row), a transaction committed every commit.interval.ms
 *   plain-sink:   KafkaConsumer (read_committed) -> DataFileWriter, one table file per period (deflate level 1);
 *                 on close fsync, rename to its published name, fsync the directory, then commit the offsets
 *                 (at-least-once)
 * </pre>
 *
 * <p>A published sink file is named {@code table-<seq>-<rows>.avro}, so the driver counts rows from the names.
 */
final class StaticTablesPlainJobs {
    /** The published files of the plain sink: {@code table-<seq>-<rows>.avro}. */
    static final String TABLE_PREFIX = "table-";

    private StaticTablesPlainJobs() {
    }

    /** Producer settings as the flow job's: Kafka Streams' linger.ms and flow-kafka's batch size and compression. */
    private static Properties producerProps(String bootstrap, String transactionalId) {
        Properties p = Workload.producerProps(bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "100");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        return p;
    }

    /**
     * Reads every part file under {@code tablesPath} (tables in name order) and produces each row to {@code topic}.
     * Calls {@code running} once the producer is ready.
     */
    static void source(String bootstrap, String name, String tablesPath, String topic, long commitMs,
            Runnable running) throws IOException {
        List<File> files = partFiles(Paths.get(tablesPath));
        GenericDatumReader<GenericRecord> datumReader = new GenericDatumReader<>(StaticTablesJobs.ROW);
        GenericDatumWriter<GenericRecord> datumWriter = new GenericDatumWriter<>(StaticTablesJobs.ROW);
        ByteArrayOutputStream buf = new ByteArrayOutputStream(128);
        BinaryEncoder enc = null;
        GenericRecord row = null;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap, name + "-plain"),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            running.run();
            producer.beginTransaction();
            long committedAt = System.currentTimeMillis();
            for (File f : files) {
                try (DataFileReader<GenericRecord> reader = new DataFileReader<>(f, datumReader)) {
                    while (reader.hasNext()) {
                        row = reader.next(row);
                        buf.reset();
                        enc = EncoderFactory.get().directBinaryEncoder(buf, enc);
                        datumWriter.write(row, enc);
                        producer.send(new ProducerRecord<>(topic, buf.toByteArray()));
                        long now = System.currentTimeMillis();
                        if (now - committedAt >= commitMs) {
                            producer.commitTransaction();
                            producer.beginTransaction();
                            committedAt = now;
                        }
                    }
                }
            }
            producer.commitTransaction();
        }
    }

    /** The part files of every published table under {@code root}, tables in name (= timestamp) order. */
    static List<File> partFiles(Path root) throws IOException {
        List<File> files = new ArrayList<>();
        for (String table : LocalTablesDirectory.open(root).tableNames().stream().sorted().toList()) {
            try (Stream<Path> s = Files.list(root.resolve(table))) {
                s.filter(p -> p.getFileName().toString().endsWith(".avro")).sorted().forEach(p -> files.add(p.toFile()));
            }
        }
        return files;
    }

    /**
     * Consumes {@code topic} from the beginning and writes a table file per {@code periodMs} to {@code outputDir},
     * until {@code stop} says so. Calls {@code running} once assigned.
     */
    static void sink(String bootstrap, String name, String topic, String outputDir, int partitions, long periodMs,
            Runnable running, BooleanSupplier stop) throws IOException {
        Path dir = Paths.get(outputDir);
        Files.createDirectories(dir);
        Properties p = OutputMeter.consumerProps(bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, name + "-plain");
        GenericDatumReader<GenericRecord> datum = new GenericDatumReader<>(StaticTablesJobs.ROW);
        BinaryDecoder dec = null;
        GenericRecord row = null;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            running.run();
            TableFile file = null;
            int seq = 0;
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            while (!stop.getAsBoolean()) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                    if (file == null) {
                        file = new TableFile(dir, seq++);
                    }
                    dec = DecoderFactory.get().binaryDecoder(r.value(), dec);
                    row = datum.read(row, dec);
                    file.append(row);
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                if (file != null && System.currentTimeMillis() - file.openedAt >= periodMs) {
                    file.publish();
                    file = null;
                    consumer.commitSync(offsets); // after the file is durable: at-least-once
                    offsets.clear();
                }
            }
            if (file != null) {
                file.abandon();
            }
        }
    }

    /** One table file being written: a temporary name until published. */
    private static final class TableFile {
        final long openedAt = System.currentTimeMillis();
        private final Path dir;
        private final int seq;
        private final Path tmp;
        private final FileOutputStream out;
        private final DataFileWriter<GenericRecord> writer;
        private long rows;

        TableFile(Path dir, int seq) throws IOException {
            this.dir = dir;
            this.seq = seq;
            this.tmp = dir.resolve(".tmp-" + seq + ".avro");
            this.out = new FileOutputStream(tmp.toFile());
            this.writer = new DataFileWriter<>(new GenericDatumWriter<>(StaticTablesJobs.ROW));
            writer.setCodec(CodecFactory.deflateCodec(1)); // as the sink's tables
            writer.create(StaticTablesJobs.ROW, out);
        }

        void append(GenericRecord row) throws IOException {
            writer.append(row);
            rows++;
        }

        /** Flushes, fsyncs and closes the file, renames it to its published name and fsyncs the directory. */
        void publish() throws IOException {
            writer.flush();
            out.getChannel().force(true);
            writer.close();
            Path published = dir.resolve(String.format(Locale.ROOT, "%s%06d-%d.avro", TABLE_PREFIX, seq, rows));
            Files.move(tmp, published, StandardCopyOption.ATOMIC_MOVE);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
        }

        void abandon() throws IOException {
            writer.close();
            Files.deleteIfExists(tmp);
        }
    }

    /** The rows of the published files under {@code dir}, counted from their names. */
    static long publishedRows(Path dir) {
        long n = 0;
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith(TABLE_PREFIX) && name.endsWith(".avro")) {
                    n += Long.parseLong(name.substring(name.lastIndexOf('-') + 1, name.length() - ".avro".length()));
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1; // not there yet
        }
        return n;
    }
}
