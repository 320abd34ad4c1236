package io.flowkafka.examples.hourlytables;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * A pipeline that writes a stream of page views to hourly static tables.
 *
 * <pre>
 *   topic page-views (JSON {"user", "url", "bytes"})
 *     -> read (Source)                       stream views
 *     -> TArrivalOrderTableSink hourly       one Avro table per hour in the output directory, named by its hour
 *                                            (2026-12-03T10:00:00Z); at most 1,000,000 rows per table (a burst
 *                                            closes tables early and runs the sequence ahead); kept 30 days
 * </pre>
 *
 * <p>The sink needs {@code io.flowkafka:flow-kafka-connectors} on the class path. Read a table with
 * {@code StaticTableReader.open(LocalTablesDirectory.open(dir), "2026-12-03T10:00:00Z").readAll()}.
 */
public final class HourlyTables {
    /** The page views, as read from the topic and written to the tables. */
    public static final Schema VIEW = SchemaBuilder.record("PageView").namespace("io.flowkafka.examples.hourlytables")
            .fields().requiredString("user").requiredString("url").requiredLong("bytes").endRecord();
    /** The sink id. */
    public static final String SINK = "hourly";

    private HourlyTables() {
    }

    /**
     * The pipeline.
     *
     * @param name the pipeline name
     * @param topic the topic of page views
     * @param outputDirectory where the tables go, a directory of this sink's own
     * @return the spec
     */
    public static PipelineSpec spec(String name, String topic, String outputDirectory) {
        return spec(name, topic, outputDirectory, "1h", "30d", 1_000_000);
    }

    /**
     * The pipeline with another table period, TTL and row limit (tests use seconds and a few rows).
     *
     * @param name the pipeline name
     * @param topic the topic of page views
     * @param outputDirectory where the tables go, a directory of this sink's own
     * @param tablePeriod the table period, such as {@code "1h"}
     * @param tableTtl how long a table is kept, such as {@code "30d"}; at most 40000 periods
     * @param maxRowCount the most rows per table
     * @return the spec
     */
    public static PipelineSpec spec(String name, String topic, String outputDirectory, String tablePeriod,
            String tableTtl, long maxRowCount) {
        return PipelineSpec.builder(name)
                .stream("raw", VIEW)
                .stream("views", VIEW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", topic))
                        .outputStreamIds("views")
                        .sink(SINK, "TArrivalOrderTableSink", List.of("views"), Map.of(
                                "output_directory", outputDirectory,
                                "table_period", tablePeriod,
                                "table_ttl", tableTtl,
                                "max_row_count", maxRowCount,
                                "data_weight_column", "bytes",
                                "format", "avro")))
                .build();
    }

    /**
     * Runs the pipeline until the process is stopped.
     *
     * @param args bootstrap servers, topic, output directory
     * @throws Exception if the runtime cannot start
     */
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (FlowRuntime runtime = FlowRuntime.create(spec("hourly-tables", args[1], args[2]), props)) {
            runtime.start();
            Runtime.getRuntime().addShutdownHook(new Thread(runtime::close));
            Thread.currentThread().join();
        }
    }
}
