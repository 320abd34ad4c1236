package io.flowkafka.connectors.clickhouse;

import com.google.common.hash.Hashing;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.avro.generic.GenericRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a ClickHouse batching sink's outbox: each outbox batch becomes one {@code INSERT ... FORMAT JSONEachRow}
 * per shard. Keeps the exactly-once rule of reference 002: batches are cut at the same message-id boundaries on every
 * replay (the outbox cuts them from the log alone, at transaction ends or {@code max_batch_records}, and resumes at a
 * boundary), a batch's rows are encoded to the same bytes every time, and each insert carries
 * {@code insert_deduplication_token} = the batch's largest message id (with {@code :<shard>} on a sharded sink) where
 * the server has the setting. A replayed batch is then a repeat the table drops, by the token, or by the identical
 * block's checksum on servers without tokens (ReplicatedMergeTree's block deduplication).
 *
 * <p>The writer session (one client per shard, the {@link TargetTable} checks) starts lazily at the first batch and
 * lives until {@link #close}. Threading: called only by the sink's delivery-service thread.
 */
final class ClickHouseBatchDeliverer implements OutboxDeliverer {
    private static final Logger LOG = LoggerFactory.getLogger(ClickHouseBatchDeliverer.class);
    /** The row format of every insert. */
    static final String FORMAT = "JSONEachRow";

    private final SinkContext context;
    private final ClickHouseSinkParameters parameters;
    private final boolean sharded;
    private final List<String> shards;
    private final String streamId;
    private final JsonEachRowEncoder encoder;
    private final Map<String, ClickHouseHttpClient> clients = new LinkedHashMap<>();
    private final Map<String, TargetTable> targets = new LinkedHashMap<>();

    ClickHouseBatchDeliverer(SinkContext context) {
        this.context = context;
        this.parameters = ClickHouseSinkParameters.of(context.sink());
        this.sharded = ClickHouseSinkProvider.T_SHARDED.equals(context.sink().sinkClassName());
        this.shards = List.copyOf(parameters.urls().keySet());
        this.streamId = context.sink().inputStreamIds().get(0);
        ClickHouseInputChecks.require(context.sink(), context.inputSchemas());
        this.encoder = new JsonEachRowEncoder(parameters.messageIdColumn());
    }

    private String sinkName() {
        return "sink '" + context.sink().id() + "' (" + context.sink().sinkClassName() + " to "
                + parameters.qualifiedTable() + ")";
    }

    @Override
    public OptionalLong open(int partition, OptionalLong committedOffset) {
        return OptionalLong.empty(); // the delivery group's offset: a replay from it cuts the same batches
    }

    @Override
    public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
        startSession();
        Map<String, List<OutboxRecord>> byShard = route(batch.records());
        String token = batch.dedupToken().toString();
        for (Map.Entry<String, List<OutboxRecord>> e : byShard.entrySet()) {
            String shard = e.getKey();
            byte[] rows = rows(e.getValue());
            Map<String, String> settings = settings(shard, token);
            try {
                clients.get(shard).insert(parameters.qualifiedTable(), FORMAT, rows, settings);
            } catch (ClickHouseException ex) {
                String what = sinkName() + ": inserting outbox offsets " + batch.firstOffset() + ".."
                        + (batch.nextOffset() - 1) + (sharded ? " into shard " + shard : "") + " failed";
                if (ex.permanent()) {
                    throw OutboxDeliveryException.fatal(what + " and retrying cannot help: " + ex.getMessage()
                            + " (fix the table or the sink's schema, then restart the pipeline)");
                }
                throw new OutboxDeliveryException(what + ": " + ex.getMessage(), ex);
            } catch (IOException ex) {
                throw new OutboxDeliveryException(sinkName() + ": inserting outbox offsets " + batch.firstOffset()
                        + ".." + (batch.nextOffset() - 1) + " failed (retried with the same block): " + ex, ex);
            }
        }
    }

    private Map<String, String> settings(String shard, String token) {
        return dedupSettings(targets.get(shard).version(), token, sharded ? shard : null);
    }

    /**
     * The query settings of one insert (reference 002: "insert_deduplication_token equals the batch's maximum
     * MessageId. With shard_hosts, each shard receives that batch token with a :<shard name> suffix"); none on a
     * server without the setting, which deduplicates by the block's checksum alone.
     *
     * @param version the server's version
     * @param token the batch's largest message id, as text
     * @param shard the shard's name on a sharded sink, else null
     * @return the settings to send with the insert
     */
    static Map<String, String> dedupSettings(ServerVersion version, String token, String shard) {
        if (!version.hasDedupToken()) {
            return Map.of();
        }
        return Map.of("insert_deduplication_token", shard == null ? token : token + ":" + shard);
    }

    /** The batch's records by shard, in log order within each; shards in name order. */
    private Map<String, List<OutboxRecord>> route(List<OutboxRecord> records) throws OutboxDeliveryException {
        Map<String, List<OutboxRecord>> byShard = new java.util.TreeMap<>();
        if (!sharded) {
            byShard.put(shards.get(0), records);
            return byShard;
        }
        for (OutboxRecord r : records) {
            int i = Math.floorMod(shardHash(r), shards.size());
            byShard.computeIfAbsent(shards.get(i), s -> new ArrayList<>()).add(r);
        }
        return byShard;
    }

    /**
     * The hash that picks a record's shard: of its {@code sharding_key} value (a {@code bytes} value by its content,
     * not its holder's {@code toString()}, which names only its length), or of its message id.
     */
    private int shardHash(OutboxRecord r) throws OutboxDeliveryException {
        if (parameters.shardingKey() == null) {
            return Hashing.murmur3_32_fixed().hashString(r.messageId().toString(), StandardCharsets.UTF_8).asInt();
        }
        Object v = decode(r).get(parameters.shardingKey());
        if (v instanceof java.nio.ByteBuffer bb) {
            return Hashing.murmur3_32_fixed().hashBytes(bb.duplicate()).asInt();
        }
        return Hashing.murmur3_32_fixed().hashString(String.valueOf(v), StandardCharsets.UTF_8).asInt();
    }

    private byte[] rows(List<OutboxRecord> records) throws OutboxDeliveryException {
        for (OutboxRecord r : records) {
            encoder.add(decode(r), r.messageId().toString());
        }
        return encoder.take();
    }

    private GenericRecord decode(OutboxRecord r) throws OutboxDeliveryException {
        if (r.value() == null) {
            throw OutboxDeliveryException.fatal(sinkName() + ": outbox offset " + r.offset() + " has no value");
        }
        try {
            return context.decodeValue(streamId, r.value());
        } catch (RuntimeException e) {
            throw OutboxDeliveryException.fatal(sinkName() + ": outbox offset " + r.offset() + " does not decode as "
                    + "stream " + streamId + ": " + e.getMessage());
        }
    }

    /** Starts the writer session: a client per shard, the target checks (reference 002: when the session starts). */
    private void startSession() throws OutboxDeliveryException {
        if (targets.size() == shards.size()) {
            return;
        }
        String user = (String) context.sinkProperties().get("user");
        String password = (String) context.sinkProperties().get("password");
        for (String shard : shards) {
            if (targets.containsKey(shard)) {
                continue;
            }
            ClickHouseHttpClient client = clients.computeIfAbsent(shard, s -> new ClickHouseHttpClient(
                    parameters.urls().get(s), user, password, parameters.writeTimeout()));
            try {
                TargetTable target = TargetTable.inspect(client, parameters.database(), parameters.table(),
                        parameters.replayHorizon());
                for (String w : target.warnings()) {
                    LOG.warn("{}: {}", sinkName(), w);
                }
                targets.put(shard, target);
            } catch (TargetTable.RejectedTarget e) {
                throw OutboxDeliveryException.fatal(sinkName() + ": " + e.getMessage());
            } catch (ClickHouseException e) {
                if (e.permanent()) {
                    throw OutboxDeliveryException.fatal(sinkName() + ": checking the target table failed: "
                            + e.getMessage());
                }
                throw new OutboxDeliveryException(sinkName() + ": checking the target table failed: " + e, e);
            } catch (IOException e) {
                throw new OutboxDeliveryException(sinkName() + ": cannot reach ClickHouse at "
                        + parameters.urls().get(shard) + ": " + e, e);
            }
        }
    }

    /** The checked targets by shard, once the session started (for tests). */
    Map<String, TargetTable> targets() {
        return Map.copyOf(targets);
    }

    @Override
    public void release(int partition) {
        // nothing per partition: the session serves every partition
    }

    @Override
    public void close() {
        clients.values().forEach(ClickHouseHttpClient::close);
        clients.clear();
        targets.clear();
    }
}
