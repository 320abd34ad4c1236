package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The parameters of the non-batching ClickHouse sinks ({@code TAtLeastOnceClickHouseSink},
 * {@code TAtMostOnceClickHouseSink}), checked at spec load with the rule that no accepted parameter is silently
 * ignored: a parameter only the batching sinks use ({@code max_batch_records}, {@code replay_horizon},
 * {@code shard_hosts}, {@code sharding_key}) is rejected with its fix. The shared ones ({@code url}, {@code table},
 * {@code database}, {@code format}, {@code message_id_column}, {@code write_timeout}) are checked by
 * {@link ClickHouseSinkParameters}' rules.
 *
 * <ul>
 *   <li>{@code max_insert_attempts} (at-least-once only, default 10): how many times in total an INSERT that
 *       failed with an unclassified error is attempted before the pipeline stops.</li>
 * </ul>
 *
 * @param common the shared parameters (one url, named {@code ""})
 * @param maxInsertAttempts the attempts of an unclassified failure, at least 1
 */
public record DirectSinkParameters(ClickHouseSinkParameters common, int maxInsertAttempts) {
    /** Flow's default of {@code max_insert_attempts}. */
    public static final int DEFAULT_MAX_INSERT_ATTEMPTS = 10;
    private static final Set<String> SHARED = Set.of("url", "table", "database", "format", "message_id_column",
            "write_timeout");
    private static final String ATTEMPTS = "max_insert_attempts";
    /** Checked by the core spec validator (and refused there for a sink without at-most-once support). */
    private static final String STRATEGY = "at_most_once_strategy";

    /**
     * Checks a sink's parameters.
     *
     * @param sink a {@code TAtLeastOnceClickHouseSink} or {@code TAtMostOnceClickHouseSink}
     * @return the problems, empty when the parameters are valid
     */
    public static List<Problem> validate(SinkSpec sink) {
        List<Problem> problems = new ArrayList<>();
        boolean atLeastOnce = ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE.equals(sink.sinkClassName());
        String of = sink.sinkClassName() + " '" + sink.id() + "'";
        Map<String, Object> shared = new HashMap<>();
        Set<String> accepted = new TreeSet<>(SHARED);
        if (atLeastOnce) {
            accepted.add(ATTEMPTS);
        }
        for (Map.Entry<String, Object> e : new TreeMap<>(sink.parameters()).entrySet()) {
            String name = e.getKey();
            if (SHARED.contains(name)) {
                shared.put(name, e.getValue());
            } else if (!accepted.contains(name) && !STRATEGY.equals(name)) {
                problems.add(new Problem("parameters." + name, of + " has no parameter '" + name + "'" + why(name),
                        "remove " + name + "; " + sink.sinkClassName() + " takes " + String.join(", ", accepted)
                                + " (credentials go in flow.sink." + sink.id() + ".user/.password)"));
            }
        }
        SinkSpec asBatching = new SinkSpec(sink.id(), ClickHouseSinkProvider.T_BATCHING, sink.inputStreamIds(), shared);
        for (Problem p : ClickHouseSinkParameters.validate(asBatching)) {
            problems.add(new Problem(p.field(), p.message().replace(ClickHouseSinkProvider.T_BATCHING,
                    sink.sinkClassName()), p.fix()));
        }
        if (atLeastOnce && sink.parameters().containsKey(ATTEMPTS) && attempts(sink.parameters().get(ATTEMPTS)) < 1) {
            problems.add(new Problem("parameters." + ATTEMPTS, of + ": " + ATTEMPTS + " must be an integer of at "
                    + "least 1 but was " + sink.parameters().get(ATTEMPTS), "set " + ATTEMPTS + " to the number of "
                    + "attempts in total of an INSERT failing with an unclassified error, e.g. 10 (the default)"));
        }
        return problems;
    }

    private static String why(String name) {
        return switch (name) {
            case "max_batch_records" -> ": the epoch's (at-least-once) or each message's (at-most-once) rows are "
                    + "one INSERT";
            case "replay_horizon" -> ": it bounds the deduplication window of the exactly-once batching sinks only";
            case "shard_hosts", "sharding_key" -> ": only TShardedClickHouseBatchingSink writes to shards";
            case ATTEMPTS -> ": an at-most-once INSERT that started is never retried";
            default -> "";
        };
    }

    private static int attempts(Object value) {
        try {
            return Integer.parseInt(String.valueOf(value));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Reads validated parameters.
     *
     * @param sink a sink that passed {@link #validate}
     * @return the parameters
     * @throws IllegalArgumentException if the sink does not pass {@link #validate}
     */
    public static DirectSinkParameters of(SinkSpec sink) {
        List<Problem> problems = validate(sink);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(problems.toString());
        }
        Map<String, Object> shared = new HashMap<>(sink.parameters());
        shared.remove(ATTEMPTS);
        shared.remove(STRATEGY);
        ClickHouseSinkParameters common = ClickHouseSinkParameters.of(new SinkSpec(sink.id(),
                ClickHouseSinkProvider.T_BATCHING, sink.inputStreamIds(), shared));
        int attempts = sink.parameters().containsKey(ATTEMPTS) ? attempts(sink.parameters().get(ATTEMPTS))
                : DEFAULT_MAX_INSERT_ATTEMPTS;
        return new DirectSinkParameters(common, attempts);
    }
}
