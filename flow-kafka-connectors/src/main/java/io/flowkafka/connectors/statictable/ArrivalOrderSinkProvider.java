package io.flowkafka.connectors.statictable;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.Durations;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.spi.StagedSinkWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Flow's {@code TArrivalOrderTableSink} (reference 001, "Writing to static tables in arrival order"): writes its one
 * input stream as a continuous sequence of static tables, one per {@code table_period} slot, into
 * {@code output_directory}, exactly once: each task stages its epoch's rows in the directory, and they become
 * visible once the epoch's transaction committed ({@link StagedSinkWriter}).
 *
 * <p>Parameters:
 * <ul>
 *   <li>{@code output_directory} (required): the tables directory, a filesystem path of its own;</li>
 *   <li>{@code table_period} (required): the step of the table sequence, a duration such as {@code "1h"};</li>
 *   <li>{@code table_ttl} (required): how long a table lives; {@code table_ttl / table_period} at most 40000;</li>
 *   <li>{@code max_row_count}, {@code max_data_weight} (optional): the limits that close a slot early;</li>
 *   <li>{@code data_weight_column} (optional): an int64 column giving each message's weight (null: its size);</li>
 *   <li>{@code format} ({@code json} default, or {@code avro}): how the task hands messages to the sink
 *   ({@code avro}: staged as they are, the fast way).</li>
 * </ul>
 * Deployment property {@code flow.sink.<sink id>.tick.ms} (default 1000): how often an instance checks whether the
 * open slot is due to close by time.
 */
public final class ArrivalOrderSinkProvider implements SinkProvider {
    /** The sink class name. */
    public static final String T_ARRIVAL_ORDER_TABLE_SINK = "TArrivalOrderTableSink";

    /** Creates the provider; found with {@link java.util.ServiceLoader}. */
    public ArrivalOrderSinkProvider() {
    }

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(T_ARRIVAL_ORDER_TABLE_SINK);
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        List<Problem> problems = new ArrayList<>();
        Config.parse(sink, problems);
        return problems;
    }

    /**
     * Reference 001: the sink "requires exactly one input stream with increasing MessageId values within it". A
     * task's message ids increase when it reads one source partition in order and emits only from its messages: a
     * computation reading one source topic (a Source, or a Transform reading a keyed source) without timers or key
     * visitors. Internal streams and several source topics bring each task messages of many source partitions (ids
     * begin with the partition's hash), timers and visits ids of earlier messages.
     */
    @Override
    public List<Problem> validate(ComputationSpec computation, SinkSpec sink, Map<String, Schema> inputSchemas) {
        List<Problem> problems = new ArrayList<>(validate(sink));
        Object column = sink.parameters().get("data_weight_column");
        if (column instanceof String c && !c.isBlank()) {
            for (Schema schema : inputSchemas.values()) {
                try {
                    DataWeightColumn.of(schema, c);
                } catch (IllegalArgumentException e) {
                    String why = e.getMessage().contains("; fix:") ? e.getMessage().substring(0,
                            e.getMessage().indexOf("; fix:")) : e.getMessage();
                    problems.add(new Problem("parameters.data_weight_column", "TArrivalOrderTableSink '" + sink.id()
                            + "': " + why, "name an int64 field of the input stream, or remove "
                            + "data_weight_column to weigh each row by its message size"));
                }
            }
        }
        List<String> why = new ArrayList<>();
        int topics = 0;
        for (SourceSpec source : computation.sourceStreams()) {
            topics += topicCount(source);
        }
        if (topics > 1) {
            why.add("reads " + topics + " source topics, each task a partition of each, whose ids interleave");
        }
        if (!computation.inputStreamIds().isEmpty()) {
            why.add("reads internal streams " + computation.inputStreamIds()
                    + ", whose partitions bring messages of many source partitions");
        }
        if (!computation.timers().isEmpty()) {
            why.add("has timers, whose outputs carry the ids of earlier messages");
        }
        if (!computation.keyVisitorStreams().isEmpty()) {
            why.add("has key visitors, whose outputs are not in message order");
        }
        if (!why.isEmpty()) {
            problems.add(new Problem("sink_class_name", T_ARRIVAL_ORDER_TABLE_SINK + " '" + sink.id()
                    + "' needs increasing message ids in its input, but computation '" + computation.id() + "' "
                    + String.join(" and ", why),
                    "write the sink from a computation reading one source topic, without timers or key visitors "
                            + "(a Source computation; for a stream of several topics or of a Transform, route it "
                            + "through a topic: a KafkaSink, then a Source computation reading that topic with "
                            + "the sink)"));
        }
        return problems;
    }

    /**
     * The topics a source reads: a KafkaSource's {@code topics} (a list or a comma-separated string; {@code topic} as
     * KafkaSource takes it too), else one.
     */
    private static int topicCount(SourceSpec source) {
        Object t = source.parameters().get("topics");
        if (t == null) {
            t = source.parameters().get("topic");
        }
        if (t instanceof List<?> list) {
            return list.size();
        }
        if (t instanceof String names) {
            return (int) Arrays.stream(names.split(",")).filter(n -> !n.isBlank()).count();
        }
        return 1;
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return false;
    }

    @Override
    public boolean synchronous(SinkSpec sink) {
        return true;
    }

    @Override
    public boolean staged(SinkSpec sink) {
        return true;
    }

    @Override
    public StagedSinkWriter createWriter(SinkContext context) {
        List<Problem> problems = new ArrayList<>();
        Config config = Config.parse(context.sink(), problems);
        if (config == null) {
            throw new IllegalArgumentException(problems.get(0).message() + "; fix: " + problems.get(0).fix());
        }
        return new ArrivalOrderWriter(context, config);
    }

    /** Never called: the sink is written by its tasks ({@link #createWriter}), not through an outbox. */
    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        throw new UnsupportedOperationException(T_ARRIVAL_ORDER_TABLE_SINK + " has no outbox; it is written by "
                + "createWriter");
    }

    /** A sink's parsed parameters. */
    record Config(String sinkId, String inputStream, Path outputDirectory, ArrivalOrderSinkParameters parameters,
            @Nullable String dataWeightColumn) {
        /** The sink's parameters ({@code at_most_once_strategy} is refused by the core with its own message). */
        private static final List<String> PARAMETERS = List.of("output_directory", "table_period", "table_ttl",
                "max_row_count", "max_data_weight", "data_weight_column", "format", "at_most_once_strategy");

        /** Parses the sink's parameters, or adds problems and returns null. */
        static @Nullable Config parse(SinkSpec sink, List<Problem> problems) {
            String name = T_ARRIVAL_ORDER_TABLE_SINK + " '" + sink.id() + "'";
            Map<String, Object> p = sink.parameters();
            int before = problems.size();
            if (sink.inputStreamIds().size() != 1) {
                problems.add(new Problem("input_stream_ids", name + " needs exactly one input stream but has "
                        + sink.inputStreamIds(), "write one stream to each arrival-order sink"));
            }
            Object dir = p.get("output_directory");
            if (!(dir instanceof String d) || d.isBlank()) {
                problems.add(new Problem("parameters.output_directory", name + " has "
                        + (dir == null ? "no output_directory" : "an invalid output_directory " + dir),
                        "set sinks." + sink.id() + ".parameters.output_directory to a directory of its own"));
            }
            Duration period = duration(p, "table_period", name, problems);
            Duration ttl = duration(p, "table_ttl", name, problems);
            Long maxRows = positive(p, "max_row_count", name, problems);
            Long maxWeight = positive(p, "max_data_weight", name, problems);
            Object column = p.get("data_weight_column");
            if (column != null && (!(column instanceof String c) || c.isBlank())) {
                problems.add(new Problem("parameters.data_weight_column", name + " has an invalid data_weight_column "
                        + column, "name an int64 column of the input stream, or remove the parameter"));
            }
            for (String unsupported : List.of("payload_column", "value_serde")) {
                if (p.containsKey(unsupported)) {
                    problems.add(new Problem("parameters." + unsupported, name + " writes whole rows of its input "
                            + "stream and has no " + unsupported, "remove " + unsupported));
                }
            }
            Object format = p.getOrDefault("format", "json");
            if (!List.of("json", "avro").contains(String.valueOf(format))) {
                problems.add(new Problem("parameters.format", name + " has an unknown format '" + format + "'",
                        "set format to the input's encoding: json (default) or avro"));
            }
            for (String key : p.keySet()) {
                if (!PARAMETERS.contains(key) && !List.of("payload_column", "value_serde", "max_batch_records")
                        .contains(key)) {
                    problems.add(new Problem("parameters." + key, name + " has an unknown parameter '" + key + "'",
                            "use one of " + PARAMETERS));
                }
            }
            if (p.containsKey("max_batch_records")) {
                problems.add(new Problem("parameters.max_batch_records", name + " is written by its tasks, one staged "
                        + "file per epoch, and has no outbox batches", "remove max_batch_records"));
            }
            ArrivalOrderSinkParameters parameters = null;
            if (period != null && ttl != null) {
                try {
                    parameters = new ArrivalOrderSinkParameters(period, ttl, maxRows, maxWeight);
                } catch (IllegalArgumentException e) {
                    String message = e.getMessage();
                    int fix = message.indexOf("; fix: ");
                    problems.add(new Problem(message.startsWith("table_ttl / table_period")
                            ? "parameters.table_ttl" : "parameters", name + ": "
                            + (fix < 0 ? message : message.substring(0, fix)), "lower table_ttl or raise table_period"));
                }
            }
            if (problems.size() > before || parameters == null) {
                return null;
            }
            return new Config(sink.id(), sink.inputStreamIds().get(0), Path.of((String) dir), parameters,
                    (String) column);
        }

        private static @Nullable Duration duration(Map<String, Object> p, String field, String name,
                List<Problem> problems) {
            Object v = p.get(field);
            if (v == null) {
                problems.add(new Problem("parameters." + field, name + " has no " + field + ", which is mandatory",
                        "set " + field + " to a duration such as \"1h\""));
                return null;
            }
            try {
                Duration d = Durations.parse(v, field);
                if (d.isZero()) {
                    throw new IllegalArgumentException(field + " must be > 0 but was " + v);
                }
                return d;
            } catch (IllegalArgumentException e) {
                problems.add(new Problem("parameters." + field, name + ": " + e.getMessage(),
                        "set " + field + " to a positive duration such as \"1h\""));
                return null;
            }
        }

        private static @Nullable Long positive(Map<String, Object> p, String field, String name,
                List<Problem> problems) {
            Object v = p.get(field);
            if (v == null) {
                return null;
            }
            try {
                long n = Long.parseLong(String.valueOf(v));
                if (n <= 0) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                problems.add(new Problem("parameters." + field, name + ": " + field + " must be a positive integer but "
                        + "was " + v, "set " + field + " to a positive number, or remove it for no limit"));
                return null;
            }
        }
    }
}
