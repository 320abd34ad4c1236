package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;

/**
 * Flow's exactly-once ClickHouse sinks on the transactional outbox: {@code TClickHouseBatchingSink} (one server or
 * replicated cluster, {@code url}) and {@code TShardedClickHouseBatchingSink} (one insert per shard of each batch,
 * {@code shard_hosts}). Owns the spec rules of their parameters ({@link ClickHouseSinkParameters}); delivery is
 * {@link ClickHouseBatchDeliverer}'s. Exactly-once needs a block-deduplicating target table (ReplicatedMergeTree,
 * SharedMergeTree); see {@link TargetTable}.
 */
public final class ClickHouseSinkProvider implements SinkProvider {
    /** The unsharded exactly-once sink (recommended). */
    public static final String T_BATCHING = "TClickHouseBatchingSink";
    /** The sharded exactly-once sink: each batch split over {@code shard_hosts}, token suffix {@code :<shard>}. */
    public static final String T_SHARDED = "TShardedClickHouseBatchingSink";

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(T_BATCHING, T_SHARDED);
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        return ClickHouseSinkParameters.validate(sink);
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SinkSpec sink, Map<String, Schema> inputSchemas) {
        List<Problem> problems = new ArrayList<>(validate(sink));
        problems.addAll(ClickHouseInputChecks.problems(sink, inputSchemas));
        return problems;
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return false;
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        return new ClickHouseBatchDeliverer(context);
    }
}
