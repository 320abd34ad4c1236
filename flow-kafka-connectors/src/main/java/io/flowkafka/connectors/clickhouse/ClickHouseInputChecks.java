package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * What a ClickHouse sink needs of its input streams' schemas, checked at spec load: one row schema for the table, a
 * {@code message_id_column} that is no field of it (a row would carry the column twice, which ClickHouse refuses),
 * and a {@code sharding_key} that is one. Checked at spec load and again when a deliverer starts.
 */
final class ClickHouseInputChecks {
    private ClickHouseInputChecks() {
    }

    static List<Problem> problems(SinkSpec sink, Map<String, Schema> inputSchemas) {
        List<Problem> problems = new ArrayList<>();
        String name = sink.sinkClassName() + " '" + sink.id() + "'";
        String firstStream = null;
        Schema first = null;
        for (String stream : sink.inputStreamIds()) {
            Schema schema = inputSchemas.get(stream);
            if (schema == null) {
                continue;
            }
            if (first == null) {
                firstStream = stream;
                first = schema;
            } else if (!schema.equals(first)) {
                problems.add(new Problem("input_stream_ids", name + " reads streams " + firstStream + " and "
                        + stream + " of different schemas, but a ClickHouse table takes one row schema",
                        "give the sink streams of one schema, or one sink per schema"));
            }
        }
        if (first == null) {
            return problems;
        }
        String idColumn = string(sink.parameters().get("message_id_column"));
        if (idColumn != null && first.getField(idColumn) != null) {
            problems.add(new Problem("parameters.message_id_column", name + ": message_id_column '" + idColumn
                    + "' is also a field of stream " + firstStream + ", and a row would carry it twice",
                    "name another column for the message id"));
        }
        String shardingKey = string(sink.parameters().get("sharding_key"));
        if (shardingKey != null && first.getField(shardingKey) == null) {
            problems.add(new Problem("parameters.sharding_key", name + ": sharding_key '" + shardingKey
                    + "' is not a field of stream " + firstStream, "name one of its fields " + first.getFields()
                    .stream().map(Schema.Field::name).toList()));
        }
        return problems;
    }

    private static @Nullable String string(@Nullable Object v) {
        return v instanceof String s && !s.isBlank() ? s : null;
    }

    /** Throws the first problem as a sentence, for a deliverer started with inputs the load did not check. */
    static void require(SinkSpec sink, Map<String, Schema> inputSchemas) {
        List<Problem> problems = problems(sink, inputSchemas);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(problems.get(0).message() + "; fix: " + problems.get(0).fix());
        }
    }
}
