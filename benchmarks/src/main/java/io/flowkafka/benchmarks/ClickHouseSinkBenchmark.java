package io.flowkafka.benchmarks;

import io.flowkafka.connectors.clickhouse.ClickHouseHttpClient;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Rows per second into ClickHouse through {@code TClickHouseBatchingSink} (input topic -> source computation ->
 * transactional outbox -> batches of {@code --batch} rows, each one JSONEachRow insert into a ReplicatedMergeTree)
 * vs a plain loop of the same batch inserts with the same {@link ClickHouseHttpClient}, side by side on one server.
 * The sink's figure is end to end: from the moment the pipeline starts on a topic holding every row until the
 * table's {@code count()} reaches them. Owns nothing but its run; writes no results file.
 *
 * <p>Options: {@code --url} (default {@code FLOW_CLICKHOUSE_URL} or {@code http://127.0.0.1:18123}),
 * {@code --rows} (200000), {@code --batch} (5000), {@code --partitions} (4).
 */
public final class ClickHouseSinkBenchmark {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("bench").fields()
            .requiredString("id").requiredString("user").requiredLong("n").endRecord();

    private ClickHouseSinkBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        URI url = URI.create(o.getOrDefault("url", System.getenv().getOrDefault("FLOW_CLICKHOUSE_URL",
                "http://127.0.0.1:18123")));
        int rows = Integer.parseInt(o.getOrDefault("rows", "200000"));
        int batch = Integer.parseInt(o.getOrDefault("batch", "5000"));
        int partitions = Integer.parseInt(o.getOrDefault("partitions", "4"));
        try (ClickHouseHttpClient ch = new ClickHouseHttpClient(url, null, null, Duration.ofSeconds(60))) {
            System.out.println("ClickHouse " + ch.query("SELECT version()").strip() + " at " + url + "; " + rows
                    + " rows, batches of " + batch);
            double plain = plainLoop(ch, rows, batch);
            long insertsBefore = inserts(ch);
            double[] sink = throughSink(ch, url, rows, batch, partitions);
            long sinkInserts = inserts(ch) - insertsBefore;
            System.out.println();
            System.out.println("| job | rows | max batch | inserts | rows/s | rows/s from the first row |");
            System.out.println("|---|---|---|---|---|---|");
            System.out.printf(Locale.ROOT, "| plain loop of JSONEachRow inserts (ClickHouseHttpClient) | %d | %d | %d "
                    + "| %.0f | %.0f |%n", rows, batch, (rows + batch - 1) / batch, plain, plain);
            System.out.printf(Locale.ROOT, "| TClickHouseBatchingSink, topic to table (%d partitions) | %d | %d | %d "
                    + "| %.0f | %.0f |%n", partitions, rows, batch, sinkInserts, sink[0], sink[1]);
        }
    }

    static void createTable(ClickHouseHttpClient ch, String table) throws Exception {
        ch.query("DROP TABLE IF EXISTS default." + table);
        ch.query("CREATE TABLE default." + table + " (id String, user String, n Int64) ENGINE = ReplicatedMergeTree("
                + "'/clickhouse/tables/{shard}/" + table + "_" + System.nanoTime() + "', '{replica}') ORDER BY tuple()");
    }

    static String json(int i) {
        return "{\"id\":\"e" + i + "\",\"user\":\"u" + (i % 997) + "\",\"n\":" + i + "}";
    }

    static double plainLoop(ClickHouseHttpClient ch, int rows, int batch) throws Exception {
        createTable(ch, "bench_plain");
        long start = System.nanoTime();
        StringBuilder body = new StringBuilder();
        for (int from = 0; from < rows; from += batch) {
            body.setLength(0);
            for (int i = from; i < Math.min(rows, from + batch); i++) {
                body.append(json(i)).append('\n');
            }
            ch.insert("default.bench_plain", "JSONEachRow", body.toString().getBytes(StandardCharsets.UTF_8), Map.of());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        check(ch, "bench_plain", rows);
        return rows / seconds;
    }

    static long inserts(ClickHouseHttpClient ch) throws Exception {
        String v = ch.query("SELECT sum(value) FROM system.events WHERE event = 'InsertQuery'").strip();
        return v.isEmpty() ? 0 : Long.parseLong(v);
    }

    /** Rows/s from the pipeline's start, and from the first row in the table, to the last. */
    static double[] throughSink(ClickHouseHttpClient ch, URI url, int rows, int batch, int partitions) throws Exception {
        createTable(ch, "bench_sink");
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start()) {
            String input = "bench-ch-input";
            cluster.createTopic(input, partitions, Map.of());
            Properties pp = cluster.clientProperties();
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
                List<Future<?>> sent = new ArrayList<>();
                for (int i = 0; i < rows; i++) {
                    sent.add(producer.send(new ProducerRecord<>(input, "u" + (i % 997), json(i))));
                }
                for (Future<?> f : sent) {
                    f.get();
                }
            }
            PipelineSpec spec = PipelineSpec.builder("bench-ch")
                    .stream("raw", EVENT).stream("events", EVENT)
                    .computation("read", c -> c.kind(ComputationKind.SOURCE)
                            .source("raw", "KafkaSource", Map.of("topics", input))
                            .outputStreamIds("events")
                            .sink("ch", "TClickHouseBatchingSink", List.of("events"), Map.of("url", url.toString(),
                                    "table", "bench_sink", "max_batch_records", batch)))
                    .build();
            Properties props = new Properties();
            props.put("bootstrap.servers", cluster.bootstrapServers());
            props.put("state.dir", Files.createTempDirectory("bench-ch").toString());
            props.put("commit.interval.ms", "100");
            long start = System.nanoTime();
            try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
                runtime.start();
                long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
                long firstRow = 0;
                long firstCount = 0;
                for (long n = count(ch, "bench_sink"); n < rows; n = count(ch, "bench_sink")) {
                    if (n > 0 && firstRow == 0) {
                        firstRow = System.nanoTime();
                        firstCount = n;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the sink did not deliver " + rows + " rows in 10 minutes");
                    }
                    Thread.sleep(20); // a poll of the table: this is the measurement, not a test
                }
                long end = System.nanoTime();
                check(ch, "bench_sink", rows);
                return new double[] {rows / ((end - start) / 1e9),
                        firstRow == 0 ? Double.NaN : (rows - firstCount) / ((end - firstRow) / 1e9)};
            }
        }
    }

    static long count(ClickHouseHttpClient ch, String table) throws Exception {
        return Long.parseLong(ch.query("SELECT count() FROM default." + table).strip());
    }

    static void check(ClickHouseHttpClient ch, String table, int rows) throws Exception {
        String got = ch.query("SELECT count(), uniqExact(id) FROM default." + table).strip();
        if (!got.equals(rows + "\t" + rows)) {
            throw new IllegalStateException(table + ": expected " + rows + " distinct rows but got " + got);
        }
    }
}
