package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writer session of one non-batching ClickHouse sink in one runtime instance: the HTTP client of its server,
 * the {@link TargetTable} checks run lazily before the first INSERT (reference 002: "Each sink instance creates its
 * writer session lazily on the first write ... Complete target metadata validation runs when that session
 * starts"), and the encoding of outbox records as {@code JSONEachRow} rows. Keeps the rule that nothing is
 * inserted into a table the checks did not accept. Thread-safe.
 */
final class DirectTarget implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DirectTarget.class);

    private final SinkContext context;
    private final DirectSinkParameters parameters;
    private final String streamId;
    private final ClickHouseHttpClient client;
    private volatile TargetTable table;

    DirectTarget(SinkContext context) {
        this.context = context;
        this.parameters = DirectSinkParameters.of(context.sink());
        this.streamId = context.sink().inputStreamIds().get(0);
        ClickHouseInputChecks.require(context.sink(), context.inputSchemas());
        this.client = new ClickHouseHttpClient(parameters.common().urls().get(""),
                (String) context.sinkProperties().get("user"), (String) context.sinkProperties().get("password"),
                parameters.common().writeTimeout());
    }

    /** The sink as named in errors and logs. */
    String name() {
        return "sink '" + context.sink().id() + "' (" + context.sink().sinkClassName() + " to "
                + parameters.common().qualifiedTable() + ")";
    }

    DirectSinkParameters parameters() {
        return parameters;
    }

    /**
     * Starts the session if it has not started: checks the target table once.
     *
     * @throws TargetTable.RejectedTarget if the table cannot take the sink's writes
     * @throws IOException if the server could not be asked
     */
    void start() throws IOException {
        if (table != null) {
            return;
        }
        synchronized (this) {
            if (table == null) {
                TargetTable t = TargetTable.inspect(client, parameters.common().database(),
                        parameters.common().table(), parameters.common().replayHorizon());
                LOG.info("{}: writing to {} table on ClickHouse {}", name(), t.engine(), t.version());
                table = t;
            }
        }
    }

    /**
     * The {@code JSONEachRow} rows of records, in order.
     *
     * @param records outbox records of the sink's input stream
     * @return the rows
     * @throws IllegalArgumentException if a record has no value or does not decode as the stream's schema
     */
    byte[] rows(List<OutboxRecord> records) {
        JsonEachRowEncoder encoder = new JsonEachRowEncoder(parameters.common().messageIdColumn());
        for (OutboxRecord r : records) {
            if (r.value() == null) {
                throw new IllegalArgumentException(name() + ": message " + r.messageId() + " has no value");
            }
            encoder.add(context.decodeValue(streamId, r.value()), r.messageId().toString());
        }
        return encoder.take();
    }

    /**
     * Runs one {@code INSERT ... FORMAT JSONEachRow} with {@code rows} as its body, without deduplication: a
     * Replicated table would otherwise drop a block equal to an earlier one (by its checksum), and with it the
     * messages of an epoch whose rows equal an earlier epoch's.
     *
     * @param rows the rows
     * @throws IOException as {@link ClickHouseHttpClient#insert} throws it
     */
    void insert(byte[] rows) throws IOException {
        client.insert(parameters.common().qualifiedTable(), ClickHouseBatchDeliverer.FORMAT, rows,
                Map.of("insert_deduplicate", "0"));
    }

    @Override
    public void close() {
        client.close();
    }
}
