package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a {@code TArrivalOrderTableSink}'s outbox: each batch's uncovered messages are staged durably (so the
 * outbox may commit and purge them), and a timer ({@code flow.sink.<id>.tick.ms}) publishes the open slot as a table
 * when it is due, by limit or by time. Replay dedup: a message whose id is at or below the
 * partition's coverage (its frontier, or what is staged) is skipped, so a partly covered batch writes only its tail.
 * The timer passes the input system watermark ({@link InputWatermark}, from the outbox's watermark records) to the
 * engine, which writes empty tables and drops frontiers by it.
 *
 * <p>Threading: {@link #open}, {@link #deliver}, {@link #release} on the outbox service's thread, the timer on its
 * own; they share only the engine, which locks.
 */
final class ArrivalOrderDeliverer implements OutboxDeliverer {
    private static final Logger LOG = LoggerFactory.getLogger(ArrivalOrderDeliverer.class);

    private final SinkContext context;
    private final ArrivalOrderSinkProvider.Config config;
    private final DataWeightColumn weight;
    private final ArrivalOrderTableSink sink;
    /** Whether outbox values are the rows' Avro binary ({@code format: avro}): staged as they are. */
    private final boolean avro;
    /** Whether a row must be decoded: to re-encode a JSON value or to read its {@code data_weight_column}. */
    private final boolean decode;
    private final RowEncoder encoder;
    private final ScheduledExecutorService timer;
    /** Per open partition, the id of the last message delivered or skipped in this session. */
    private final Map<Integer, MessageId> last = new ConcurrentHashMap<>();
    /** Per open partition, the last message id staged or written: a message up to it is a duplicate. */
    private final Map<Integer, MessageId> covered = new ConcurrentHashMap<>();
    private final InputWatermark watermark = new InputWatermark();
    private volatile @Nullable String refused;

    ArrivalOrderDeliverer(SinkContext context, ArrivalOrderSinkProvider.Config config) {
        this.context = context;
        this.config = config;
        Schema schema = context.inputSchemas().get(config.inputStream());
        if (schema == null) {
            throw new IllegalArgumentException("TArrivalOrderTableSink '" + config.sinkId() + "': the schema of its "
                    + "input stream '" + config.inputStream() + "' is unknown; fix: declare the stream with a schema");
        }
        try {
            this.weight = DataWeightColumn.of(schema, config.dataWeightColumn());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("TArrivalOrderTableSink '" + config.sinkId()
                    + "', parameters.data_weight_column: " + e.getMessage(), e);
        }
        try {
            this.sink = new ArrivalOrderTableSink(LocalTablesDirectory.open(config.outputDirectory()),
                    config.parameters(), schema, new SinkProgress.Owner(context.pipeline(), context.computation(),
                            config.sinkId()));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("TArrivalOrderTableSink '" + config.sinkId() + "': cannot open "
                    + "output_directory " + config.outputDirectory(), e);
        }
        this.avro = "avro".equals(String.valueOf(context.sink().parameters().getOrDefault("format", "json")));
        this.decode = !avro || config.dataWeightColumn() != null;
        this.encoder = new RowEncoder(schema);
        long tickMs = Long.parseLong(String.valueOf(context.sinkProperties().getOrDefault("tick.ms", "1000")));
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flow-" + context.pipeline() + "-tables-" + config.sinkId());
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::tick, tickMs, tickMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException {
        checkNotRefused();
        try {
            MessageId c = sink.coverage(partition, Instant.now());
            if (c != null) {
                covered.put(partition, c);
            } else {
                covered.remove(partition);
            }
            last.remove(partition);
            watermark.forget(partition);
            return OptionalLong.empty();
        } catch (ArrivalOrderTableSink.DirectoryRefusedException e) {
            refused = e.getMessage();
            throw OutboxDeliveryException.fatal(e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw new OutboxDeliveryException("TArrivalOrderTableSink '" + config.sinkId() + "': opening partition "
                    + partition + " failed: " + e, e);
        }
    }

    @Override
    public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
        checkNotRefused();
        int p = batch.partition();
        MessageId prev = last.get(p);
        MessageId cov = covered.get(p);
        List<ArrivalOrderTableSink.Staged> rows = new ArrayList<>(batch.records().size());
        for (OutboxRecord r : batch.records()) {
            if (prev != null && r.messageId().compareTo(prev) <= 0) {
                throw OutboxDeliveryException.fatal("TArrivalOrderTableSink '" + config.sinkId() + "' needs increasing "
                        + "message ids in its input stream, but on outbox partition " + p + " message "
                        + r.messageId() + " (offset " + r.offset() + ") follows " + prev + "; fix: write the sink from "
                        + "a computation whose partitions read one source partition each, in order (a Transform)");
            }
            prev = r.messageId();
            if (cov != null && r.messageId().compareTo(cov) <= 0) {
                continue; // already staged or written: a replay
            }
            byte[] value = r.value();
            if (value == null) {
                throw OutboxDeliveryException.fatal("TArrivalOrderTableSink '" + config.sinkId() + "': outbox record "
                        + r.offset() + " of partition " + p + " has no value");
            }
            long w = value.length;
            byte[] row = value;
            if (decode) {
                GenericRecord decoded = context.decodeValue(config.inputStream(), value);
                w = weight.weightOf(decoded, value.length);
                row = avro ? value : encoder.encode(decoded);
            }
            rows.add(new ArrivalOrderTableSink.Staged(r.offset(), r.messageId(), r.systemTimestamp(), w, row));
        }
        try {
            sink.stage(p, rows);
        } catch (IOException e) {
            throw new OutboxDeliveryException("TArrivalOrderTableSink '" + config.sinkId() + "': staging failed: " + e,
                    e);
        }
        last.put(p, prev);
        if (!rows.isEmpty()) {
            covered.put(p, rows.get(rows.size() - 1).messageId());
        }
        // the timer publishes: a delivery only stages, so the outbox thread never waits for a table to be written
    }

    @Override
    public void onSystemWatermark(int partition, long systemWatermarkNs, int partitionCount) {
        watermark.update(partition, systemWatermarkNs, partitionCount);
    }

    private void tick() {
        try {
            publish();
        } catch (RuntimeException e) {
            LOG.warn("TArrivalOrderTableSink '{}': publishing failed, will retry: {}", config.sinkId(), e.toString());
        }
    }

    /**
     * Closes what is due, with the input system watermark: unknown (no empty table, no frontier dropped) until every
     * partition of the input reported one to this instance. Package-private: tests publish without the timer.
     */
    void publish() {
        if (refused != null) {
            return;
        }
        try {
            List<String> written = sink.publish(Instant.now(), watermark.current());
            if (!written.isEmpty()) {
                LOG.debug("TArrivalOrderTableSink '{}' wrote {}", config.sinkId(), written);
            }
        } catch (ArrivalOrderTableSink.DirectoryRefusedException e) {
            refused = e.getMessage();
            LOG.error("{} (the sink stops at its next delivery)", e.getMessage());
        } catch (IOException e) {
            LOG.warn("TArrivalOrderTableSink '{}': publishing failed, will retry: {}", config.sinkId(), e.toString());
        }
    }

    private void checkNotRefused() throws OutboxDeliveryException {
        String r = refused;
        if (r != null) {
            throw OutboxDeliveryException.fatal(r);
        }
    }

    @Override
    public void release(int partition) {
        last.remove(partition);
        covered.remove(partition);
        watermark.forget(partition);
        try {
            sink.release(partition);
        } catch (IOException e) {
            LOG.warn("TArrivalOrderTableSink '{}': removing unused staging files of partition {} failed (its next "
                    + "owner removes them): {}", config.sinkId(), partition, e.toString());
        }
    }

    @Override
    public void close() {
        // no interrupt: a publish in progress finishes (an interrupted one would leave a pending table to sweep)
        timer.shutdown();
        try {
            if (!timer.awaitTermination(30, TimeUnit.SECONDS)) {
                timer.shutdownNow();
            }
        } catch (InterruptedException e) {
            timer.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
