package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.Durations;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The parameters of the ClickHouse batching sinks, checked at spec load: every accepted parameter is used, every
 * other one is rejected with its fix (the rule: no parameter silently ignored).
 *
 * <ul>
 *   <li>{@code url} ({@code TClickHouseBatchingSink}, required): the server's HTTP interface,
 *       {@code http(s)://host:port};</li>
 *   <li>{@code shard_hosts} ({@code TShardedClickHouseBatchingSink}, required): shard name to HTTP interface, e.g.
 *       {@code {s1: "http://ch1:8123", s2: "http://ch2:8123"}};</li>
 *   <li>{@code sharding_key} (sharded only, optional): the column whose value picks a row's shard; by default the
 *       message id;</li>
 *   <li>{@code table} (required), {@code database} (default {@code default});</li>
 *   <li>{@code format} ({@code json} default, or {@code avro}): how messages are kept in the outbox;</li>
 *   <li>{@code max_batch_records} (default 500, at most 1,000,000: one insert must stay one block, below the
 *       server's {@code max_insert_block_size} of 1,048,576);</li>
 *   <li>{@code message_id_column} (optional): a {@code String} column that receives each row's message id, so
 *       that two batches of equal rows never make equal blocks;</li>
 *   <li>{@code replay_horizon} (default {@code 1d}): how late a replay may reach ClickHouse; a shorter known
 *       deduplication window is warned about;</li>
 *   <li>{@code write_timeout} (default {@code 60s}): the bound of one request.</li>
 * </ul>
 * Credentials are deployment properties, never in the spec: {@code flow.sink.<sink id>.user} and
 * {@code flow.sink.<sink id>.password}.
 *
 * @param urls the HTTP interfaces by shard name (one entry, named {@code ""}, for the unsharded sink), sorted
 * @param database the database
 * @param table the table
 * @param maxBatchRecords the largest batch
 * @param shardingKey the sharding column, or null (the message id)
 * @param messageIdColumn the message-id column, or null
 * @param replayHorizon the replay horizon
 * @param writeTimeout the request bound
 */
public record ClickHouseSinkParameters(Map<String, URI> urls, String database, String table, int maxBatchRecords,
        String shardingKey, String messageIdColumn, Duration replayHorizon, Duration writeTimeout) {
    /** The largest {@code max_batch_records}: below ClickHouse's default {@code max_insert_block_size}. */
    public static final int MAX_BATCH_RECORDS = 1_000_000;
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Set<String> COMMON = Set.of("table", "database", "format", "max_batch_records",
            "message_id_column", "replay_horizon", "write_timeout");

    /**
     * The table as it goes into a statement: {@code `database`.`table`}.
     *
     * @return the quoted, qualified table name
     */
    public String qualifiedTable() {
        return "`" + database + "`.`" + table + "`";
    }

    /**
     * Checks a sink's parameters.
     *
     * @param sink the sink
     * @return the problems, empty when the parameters are valid
     */
    public static List<Problem> validate(SinkSpec sink) {
        List<Problem> problems = new ArrayList<>();
        boolean sharded = ClickHouseSinkProvider.T_SHARDED.equals(sink.sinkClassName());
        Map<String, Object> p = sink.parameters();
        String of = sink.sinkClassName() + " '" + sink.id() + "'";
        for (String name : new TreeMap<>(p).keySet()) {
            boolean known = COMMON.contains(name) || (sharded ? Set.of("shard_hosts", "sharding_key").contains(name)
                    : "url".equals(name));
            if (!known) {
                problems.add(new Problem("parameters." + name, of + " has no parameter '" + name + "'",
                        "remove " + name + "; " + sink.sinkClassName() + " takes " + (sharded
                                ? "shard_hosts, sharding_key" : "url") + ", " + String.join(", ", new TreeSet<>(COMMON))
                                + " (credentials go in flow.sink." + sink.id() + ".user/.password)"));
            }
        }
        if (sharded) {
            if (!(p.get("shard_hosts") instanceof Map<?, ?> hosts) || hosts.isEmpty()) {
                problems.add(new Problem("parameters.shard_hosts", of + " has " + (p.get("shard_hosts") == null
                        ? "no shard_hosts" : "shard_hosts that is not a map of shard name to URL: " + p.get("shard_hosts")),
                        "set shard_hosts to {<shard name>: \"http://host:8123\", ...}, one entry per shard"));
            } else {
                hosts.forEach((k, v) -> checkUrl(problems, of, "parameters.shard_hosts." + k, v));
            }
            checkIdentifier(problems, of, p, "sharding_key", false);
        } else {
            checkUrl(problems, of, "parameters.url", p.get("url"));
        }
        checkIdentifier(problems, of, p, "table", true);
        checkIdentifier(problems, of, p, "database", false);
        checkIdentifier(problems, of, p, "message_id_column", false);
        Object format = p.getOrDefault("format", "json");
        if (!List.of("json", "avro").contains(String.valueOf(format))) {
            problems.add(new Problem("parameters.format", of + " has an unknown format '" + format + "'",
                    "set format to json (default) or avro"));
        }
        Object max = p.getOrDefault("max_batch_records", 500);
        int n;
        try {
            n = Integer.parseInt(String.valueOf(max));
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > MAX_BATCH_RECORDS) {
            problems.add(new Problem("parameters.max_batch_records", of + ": max_batch_records must be an integer in "
                    + "1.." + MAX_BATCH_RECORDS + " but was " + max, "set max_batch_records to a number such as 500 "
                    + "(one batch must be one ClickHouse block: fewer rows than max_insert_block_size)"));
        }
        for (String d : List.of("replay_horizon", "write_timeout")) {
            if (p.containsKey(d)) {
                try {
                    if (Durations.parse(p.get(d), "parameters." + d).isZero()) {
                        throw new IllegalArgumentException("zero");
                    }
                } catch (IllegalArgumentException e) {
                    problems.add(new Problem("parameters." + d, of + ": " + d + " must be a positive duration but was "
                            + p.get(d), "set " + d + " to a duration such as 1d, 12h or 60s"));
                }
            }
        }
        return problems;
    }

    private static void checkUrl(List<Problem> problems, String of, String field, Object value) {
        String fix = "set " + field + " to the server's HTTP interface, e.g. http://clickhouse:8123";
        if (!(value instanceof String s) || s.isBlank()) {
            problems.add(new Problem(field, of + (value == null ? " has no " + field : ": " + field + " is not a URL: "
                    + value), fix));
            return;
        }
        try {
            URI u = new URI(s);
            if (!List.of("http", "https").contains(String.valueOf(u.getScheme())) || u.getHost() == null
                    || (u.getQuery() != null)) {
                throw new IllegalArgumentException();
            }
        } catch (java.net.URISyntaxException | IllegalArgumentException e) {
            problems.add(new Problem(field, of + ": " + field + " is not an http(s) URL without a query: " + s, fix));
        }
    }

    private static void checkIdentifier(List<Problem> problems, String of, Map<String, Object> p, String name,
            boolean required) {
        Object v = p.get(name);
        if (v == null && !required) {
            return;
        }
        if (!(v instanceof String s) || !IDENTIFIER.matcher(s).matches()) {
            problems.add(new Problem("parameters." + name, of + (v == null ? " has no " + name : ": " + name
                    + " is not a plain identifier: " + v), "set " + name + " to a ClickHouse name of letters, digits "
                    + "and underscores"));
        }
    }

    /**
     * Reads validated parameters.
     *
     * @param sink a sink that passed {@link #validate}
     * @return the parameters
     * @throws IllegalArgumentException if the sink does not pass {@link #validate}
     */
    public static ClickHouseSinkParameters of(SinkSpec sink) {
        List<Problem> problems = validate(sink);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(problems.toString());
        }
        Map<String, Object> p = sink.parameters();
        Map<String, URI> urls = new TreeMap<>();
        if (p.get("shard_hosts") instanceof Map<?, ?> hosts) {
            hosts.forEach((k, v) -> urls.put(String.valueOf(k), URI.create(String.valueOf(v))));
        } else {
            urls.put("", URI.create(String.valueOf(p.get("url"))));
        }
        return new ClickHouseSinkParameters(Collections.unmodifiableMap(urls), String.valueOf(p.getOrDefault("database", "default")),
                String.valueOf(p.get("table")), Integer.parseInt(String.valueOf(p.getOrDefault("max_batch_records", 500))),
                (String) p.get("sharding_key"), (String) p.get("message_id_column"),
                Durations.parse(p.getOrDefault("replay_horizon", "1d"), "parameters.replay_horizon"),
                Durations.parse(p.getOrDefault("write_timeout", "60s"), "parameters.write_timeout"));
    }
}
