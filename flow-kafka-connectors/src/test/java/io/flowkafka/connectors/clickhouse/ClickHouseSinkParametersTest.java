package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The ClickHouse sinks' parameters are checked at spec load, each problem with its field and fix. */
class ClickHouseSinkParametersTest {
    private final ClickHouseSinkProvider provider = new ClickHouseSinkProvider();

    @Test
    void shouldAcceptValidParametersOfBothSinks() {
        assertThat(provider.validate(sink(ClickHouseSinkProvider.T_BATCHING, Map.of("url", "http://ch:8123",
                "table", "events", "database", "db", "max_batch_records", 1000, "replay_horizon", "12h",
                "message_id_column", "mid", "write_timeout", "30s", "format", "avro")))).isEmpty();
        assertThat(provider.validate(sink(ClickHouseSinkProvider.T_SHARDED, Map.of("shard_hosts",
                Map.of("s1", "http://ch1:8123", "s2", "http://ch2:8123"), "table", "events",
                "sharding_key", "user")))).isEmpty();
        ClickHouseSinkParameters p = ClickHouseSinkParameters.of(sink(ClickHouseSinkProvider.T_SHARDED,
                Map.of("shard_hosts", Map.of("s2", "http://ch2:8123", "s1", "http://ch1:8123"), "table", "events")));
        assertThat(p.urls().keySet()).containsExactly("s1", "s2");
        assertThat(p.qualifiedTable()).isEqualTo("`default`.`events`");
        assertThat(p.replayHorizon()).hasDays(1);
    }

    @Test
    void shouldNameEveryBadOrUnknownParameter() {
        Map<String, Object> bad = new HashMap<>();
        bad.put("url", "ftp://ch");
        bad.put("table", "a-b");
        bad.put("max_batch_records", 2_000_000);
        bad.put("replay_horizon", "soon");
        bad.put("format", "csv");
        bad.put("topic", "x");
        bad.put("shard_hosts", Map.of("s1", "http://ch1:8123"));
        List<Problem> problems = provider.validate(sink(ClickHouseSinkProvider.T_BATCHING, bad));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder("parameters.url",
                "parameters.table", "parameters.max_batch_records", "parameters.replay_horizon", "parameters.format",
                "parameters.topic", "parameters.shard_hosts");
        assertThat(problems).allSatisfy(pr -> assertThat(pr.fix()).isNotBlank());
        assertThat(provider.validate(sink(ClickHouseSinkProvider.T_SHARDED, Map.of("url", "http://ch:8123",
                "table", "t")))).extracting(Problem::field)
                .containsExactlyInAnyOrder("parameters.url", "parameters.shard_hosts");
        assertThat(provider.validate(sink(ClickHouseSinkProvider.T_SHARDED, Map.of("shard_hosts",
                Map.of("s1", "nope"), "table", "t")))).extracting(Problem::field)
                .containsExactly("parameters.shard_hosts.s1");
    }

    @Test
    void shouldRejectTheSpecAtLoadNamingTheSink() {
        ClickHouseSinkMain.spec("chp", "in", "t", "http://ch:8123", null).validated(); // valid as the ITs run it
        assertThatThrownBy(() -> PipelineSpec.builder("chp").stream("raw", ClickHouseSinkMain.EVENT)
                .stream("events", ClickHouseSinkMain.EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events")
                        .sink("ch", ClickHouseSinkProvider.T_BATCHING, List.of("events"),
                                Map.of("table", "t", "url", "http://ch:8123", "key_column", "id")))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("parameters.key_column")
                .hasMessageContaining("'ch'");
    }

    /** Docs/code audit: these passed the load (and describe) and failed only when the runtime started. */
    @Test
    void shouldRejectColumnsTheInputSchemaContradictsAtLoad() {
        assertThatThrownBy(() -> ClickHouseDirectSinkMain.spec("chp", "in", ClickHouseDirectSinkProvider.T_AT_MOST_ONCE,
                "t", "http://ch:8123", Map.of("message_id_column", "id")).validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("sinks.ch.parameters.message_id_column")
                .hasMessageContaining("message_id_column 'id' is also a field of stream events");
        assertThatThrownBy(() -> PipelineSpec.builder("chp").stream("raw", ClickHouseSinkMain.EVENT)
                .stream("events", ClickHouseSinkMain.EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events")
                        .sink("ch", ClickHouseSinkProvider.T_SHARDED, List.of("events"), Map.of("table", "t",
                                "shard_hosts", Map.of("01", "http://ch:8123"), "sharding_key", "usr")))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("sinks.ch.parameters.sharding_key")
                .hasMessageContaining("sharding_key 'usr' is not a field of stream events");
    }

    static SinkSpec sink(String cls, Map<String, Object> parameters) {
        return new SinkSpec("ch", cls, List.of("events"), parameters);
    }
}
