package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.spi.SyncSinkWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;

/**
 * Flow's two non-batching ClickHouse sinks (reference 002): {@code TAtLeastOnceClickHouseSink}, synchronous (each
 * epoch's rows one INSERT before the epoch commits, {@link AtLeastOnceWriter}), and
 * {@code TAtMostOnceClickHouseSink}, async (one INSERT per message, from the outbox or, with
 * {@code at_most_once_strategy.enabled}, from the bounded in-memory queue; {@link AtMostOnceDeliverer}). Owns which
 * of the two is which and their spec rules ({@link DirectSinkParameters}); the target table is checked as for the
 * batching sinks ({@link TargetTable}).
 */
public final class ClickHouseDirectSinkProvider implements SinkProvider {
    /** The synchronous at-least-once sink: no intermediate storage, no deduplication token. */
    public static final String T_AT_LEAST_ONCE = "TAtLeastOnceClickHouseSink";
    /** The at-most-once sink: each message a separate INSERT, never retried once it started. */
    public static final String T_AT_MOST_ONCE = "TAtMostOnceClickHouseSink";

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(T_AT_LEAST_ONCE, T_AT_MOST_ONCE);
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        return DirectSinkParameters.validate(sink);
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SinkSpec sink, Map<String, Schema> inputSchemas) {
        List<Problem> problems = new ArrayList<>(validate(sink));
        problems.addAll(ClickHouseInputChecks.problems(sink, inputSchemas));
        return problems;
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return T_AT_MOST_ONCE.equals(sink.sinkClassName());
    }

    @Override
    public boolean synchronous(SinkSpec sink) {
        return T_AT_LEAST_ONCE.equals(sink.sinkClassName());
    }

    @Override
    public SyncSinkWriter createWriter(SinkContext context) {
        if (!synchronous(context.sink())) {
            throw new UnsupportedOperationException(context.sink().sinkClassName() + " is not synchronous");
        }
        return new AtLeastOnceWriter(context);
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        if (synchronous(context.sink())) {
            throw new UnsupportedOperationException(context.sink().sinkClassName() + " is synchronous");
        }
        return new AtMostOnceDeliverer(context);
    }
}
