package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.StagedSinkWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a {@code TArrivalOrderTableSink} from the tasks of its computation, exactly once without an outbox: each
 * task's epoch is staged into one hidden file per {@value #PART_BYTES} bytes of rows, the task's transaction records
 * their names, and they are made visible once it committed ({@link StagedSinkWriter}). A timer
 * ({@code flow.sink.<id>.tick.ms}) publishes the open slot as a table when it is due, by limit or by time, with the
 * input system watermark the committed epochs of all instances reached ({@link InputWatermark}, kept in the
 * directory), by which it writes empty tables and drops frontiers. Replay dedup: a message whose id is at or below the partition's coverage when its task opened (its
 * frontier, or what is staged) is skipped, so a replay of what is already written (a reset input) adds only its tail.
 *
 * <p>Threading: each task partition on its stream thread; the timer on its own. They share only the engine, which
 * locks.
 */
final class ArrivalOrderWriter implements StagedSinkWriter {
    /** An epoch's rows are staged into a file of their own once they hold this many bytes: the heap holds no more. */
    static final int PART_BYTES = 8 << 20;
    private static final Logger LOG = LoggerFactory.getLogger(ArrivalOrderWriter.class);

    private final SinkContext context;
    private final ArrivalOrderSinkProvider.Config config;
    private final DataWeightColumn weight;
    private final ArrivalOrderTableSink sink;
    /** Whether record values are the rows' Avro binary ({@code format: avro}): staged as they are. */
    private final boolean avro;
    /** Whether a row must be decoded: to re-encode a JSON value or to read its {@code data_weight_column}. */
    private final boolean decode;
    private final RowEncoder encoder;
    private final ScheduledExecutorService timer;
    private final Map<Integer, Epoch> epochs = new ConcurrentHashMap<>();
    /** Staging sequence numbers: unique per partition, so a staged file's name is too. */
    private final AtomicLong sequence = new AtomicLong(System.currentTimeMillis() * 1_000L);
    private final InputWatermark watermark;
    private volatile @Nullable String refused;

    /** One task partition's state between its open and its close; used by its stream thread only. */
    private static final class Epoch {
        /** The last message id written or skipped since the task opened. */
        @Nullable MessageId last;
        /** The last message id staged or written to a table when the task opened: a message up to it is a replay. */
        final @Nullable MessageId covered;
        final List<ArrivalOrderTableSink.Staged> rows = new ArrayList<>();
        long bytes;
        /**
         * This epoch's rows staged so far (parts), and the prepared epochs not visible yet: waiting for their commit,
         * or committed but not renamed (an I/O error), in order.
         */
        final List<StagingArea.Prepared> parts = new ArrayList<>();
        final List<StagingArea.Prepared> prepared = new ArrayList<>();
        /** Why the epoch cannot commit (a write failed); thrown at its prepare. */
        @Nullable OutboxDeliveryException failed;

        Epoch(@Nullable MessageId covered) {
            this.covered = covered;
        }
    }

    ArrivalOrderWriter(SinkContext context, ArrivalOrderSinkProvider.Config config) {
        this.context = context;
        this.config = config;
        Schema schema = context.inputSchemas().get(config.inputStream());
        if (schema == null) {
            throw new IllegalArgumentException(name() + ": the schema of its input stream '" + config.inputStream()
                    + "' is unknown; fix: declare the stream with a schema");
        }
        try {
            this.weight = DataWeightColumn.of(schema, config.dataWeightColumn());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name() + ", parameters.data_weight_column: " + e.getMessage(), e);
        }
        try {
            this.sink = new ArrivalOrderTableSink(LocalTablesDirectory.open(config.outputDirectory()),
                    config.parameters(), schema, new SinkProgress.Owner(context.pipeline(), context.computation(),
                            config.sinkId()));
        } catch (IOException e) {
            throw new UncheckedIOException(name() + ": cannot open output_directory " + config.outputDirectory(), e);
        }
        this.watermark = new InputWatermark(config.outputDirectory().resolve(ArrivalOrderTableSink.STAGING)
                .resolve(ArrivalOrderTableSink.WATERMARKS));
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

    private String name() {
        return "TArrivalOrderTableSink '" + config.sinkId() + "'";
    }

    @Override
    public void open(int partition, byte @Nullable [] lastRecorded) throws OutboxDeliveryException {
        checkNotRefused();
        try {
            MessageId covered = sink.coverage(partition, names(lastRecorded), Instant.now());
            epochs.put(partition, new Epoch(covered));
        } catch (ArrivalOrderTableSink.DirectoryRefusedException e) {
            refused = e.getMessage();
            throw OutboxDeliveryException.fatal(e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw new OutboxDeliveryException(name() + ": opening partition " + partition + " failed: " + e, e);
        }
    }

    /**
     * Refuses, in the producing call, a message the sink can never write: no value, or a negative
     * {@code data_weight_column}; its input then goes to the dead-letter topic and the pipeline goes on.
     */
    @Override
    public void check(OutboxRecord r) {
        byte[] value = r.value();
        if (value == null) {
            throw new IllegalArgumentException(name() + " cannot write message " + r.messageId() + ": it has no value");
        }
        if (config.dataWeightColumn() != null) { // the weight is read again at the write: only a column needs this
            try {
                weight.weightOf(context.decodeValue(config.inputStream(), value), value.length);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name() + " cannot write message " + r.messageId() + ": "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public void write(int partition, OutboxRecord r) {
        Epoch epoch = epoch(partition);
        if (epoch.failed != null) {
            return;
        }
        if (epoch.last != null && r.messageId().compareTo(epoch.last) <= 0) {
            epoch.failed = OutboxDeliveryException.fatal(name() + " needs increasing message ids in its input stream, "
                    + "but on partition " + partition + " message " + r.messageId() + " follows " + epoch.last
                    + "; fix: write the sink from a computation reading one source topic, without timers or key "
                    + "visitors");
            return;
        }
        epoch.last = r.messageId();
        if (epoch.covered != null && r.messageId().compareTo(epoch.covered) <= 0) {
            return; // already staged or written: a replay
        }
        byte[] value = r.value();
        if (value == null) {
            epoch.failed = OutboxDeliveryException.fatal(name() + ": message " + r.messageId() + " has no value");
            return;
        }
        long w = value.length;
        byte[] row = value;
        if (decode) {
            try {
                GenericRecord decoded = context.decodeValue(config.inputStream(), value);
                w = weight.weightOf(decoded, value.length);
                row = avro ? value : encoder.encode(decoded);
            } catch (RuntimeException e) { // check() refuses these in the producing call; never a task crash loop
                epoch.failed = OutboxDeliveryException.fatal(name() + ": message " + r.messageId() + ": "
                        + e.getMessage());
                return;
            }
        }
        epoch.rows.add(new ArrivalOrderTableSink.Staged(sequence.incrementAndGet(), r.messageId(), r.systemTimestamp(),
                w, row));
        epoch.bytes += row.length;
        if (epoch.bytes >= PART_BYTES) {
            try {
                stagePart(partition, epoch);
            } catch (IOException e) {
                epoch.failed = new OutboxDeliveryException(name() + ": staging failed: " + e, e);
            }
        }
    }

    private void stagePart(int partition, Epoch epoch) throws IOException {
        epoch.parts.add(sink.prepare(partition, epoch.rows));
        epoch.rows.clear();
        epoch.bytes = 0;
    }

    @Override
    public void flush(int partition) {
        // the epoch is staged by prepare, which follows
    }

    @Override
    public byte @Nullable [] prepare(int partition) throws OutboxDeliveryException {
        checkNotRefused();
        Epoch epoch = epoch(partition);
        if (epoch.failed != null) {
            throw epoch.failed;
        }
        try {
            if (!epoch.rows.isEmpty()) {
                stagePart(partition, epoch);
            }
        } catch (IOException e) {
            throw new OutboxDeliveryException(name() + ": staging failed: " + e, e);
        }
        if (epoch.parts.isEmpty() && epoch.prepared.isEmpty()) {
            return null;
        }
        // an earlier epoch that committed but could not be made visible yet is recorded again, and retried after
        // this commit
        epoch.prepared.addAll(epoch.parts);
        epoch.parts.clear();
        return String.join("\n", epoch.prepared.stream().map(p -> p.pending().getFileName().toString()).toList())
                .getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void committed(int partition, byte[] prepared) {
        Epoch epoch = epoch(partition);
        try {
            for (var it = epoch.prepared.iterator(); it.hasNext();) {
                sink.complete(it.next());
                it.remove();
            }
        } catch (IOException | RuntimeException e) {
            // the next epoch records it again, and its commit retries; a task that reopens completes it from its record
            LOG.warn("{}: making a committed epoch of partition {} visible failed (retried after the next commit): {}",
                    name(), partition, e.toString());
        }
    }

    @Override
    public void discard(int partition) {
        // what the epoch prepared stays on disk: only the task's next open knows whether it committed
        epochs.remove(partition);
        try {
            sink.release(partition);
        } catch (IOException e) {
            LOG.warn("{}: removing unused staging files of partition {} failed (its next owner removes them): {}",
                    name(), partition, e.toString());
        }
    }

    @Override
    public void onSystemWatermark(int partition, long systemWatermarkNs, int partitionCount) {
        Epoch epoch = epochs.get(partition);
        if (epoch != null && !epoch.prepared.isEmpty()) {
            return; // a committed epoch is not visible yet: the watermark waits for a report after it is
        }
        watermark.update(partition, systemWatermarkNs, partitionCount);
    }

    private Epoch epoch(int partition) {
        Epoch epoch = epochs.get(partition);
        if (epoch == null) {
            throw new IllegalStateException(name() + ": partition " + partition + " was not opened");
        }
        return epoch;
    }

    private static List<String> names(byte @Nullable [] recorded) {
        if (recorded == null || recorded.length == 0) {
            return List.of();
        }
        return Arrays.asList(new String(recorded, StandardCharsets.UTF_8).split("\n"));
    }

    private void tick() {
        try {
            publish();
        } catch (Throwable e) { // an Error too: the executor would cancel the schedule and tables would stop unseen
            LOG.warn("{}: publishing failed, will retry: {}", name(), e.toString());
        }
    }

    /**
     * Closes what is due, with the input system watermark: unknown (no empty table, no frontier dropped) until every
     * partition of the input reported one, to any instance. Package-private: tests publish without the timer.
     */
    void publish() {
        if (refused != null) {
            return;
        }
        try {
            List<String> written = sink.publish(Instant.now(), watermark.current());
            if (!written.isEmpty()) {
                LOG.debug("{} wrote {}", name(), written);
            }
        } catch (ArrivalOrderTableSink.DirectoryRefusedException e) {
            refused = e.getMessage();
            LOG.error("{} (the pipeline stops at the next commit)", e.getMessage());
        } catch (IOException e) {
            LOG.warn("{}: publishing failed, will retry: {}", name(), e.toString());
        }
    }

    private void checkNotRefused() throws OutboxDeliveryException {
        String r = refused;
        if (r != null) {
            throw OutboxDeliveryException.fatal(r);
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
