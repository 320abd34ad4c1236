package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class FlowConfigTest {
    @Test
    void shouldLeaveTheHttpPortUnsetByDefaultAndRejectANonPort() {
        FlowConfig none = new FlowConfig(Map.of());
        assertThat(none.getInt(FlowConfig.HTTP_PORT_CONFIG)).isNull();
        assertThat(none.getString(FlowConfig.HTTP_HOST_CONFIG)).isEqualTo("127.0.0.1");
        assertThat(new FlowConfig(Map.of(FlowConfig.HTTP_PORT_CONFIG, "0")).getInt(FlowConfig.HTTP_PORT_CONFIG))
                .isZero();
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.HTTP_PORT_CONFIG, "70000")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("flow.http.port")
                .hasMessageContaining("0 to 65535");
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.STATUS_INTERVAL_MS_CONFIG, "10")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("flow.status.interval.ms");
    }

    @Test
    void shouldDocumentMillisecondsForEveryMsKey() {
        for (ConfigDef.ConfigKey key : FlowConfig.configDef().configKeys().values()) {
            if (key.name.endsWith(".ms")) {
                assertThat(key.documentation).as(key.name).containsIgnoringCase("milliseconds");
            }
            assertThat(key.name).startsWith("flow.");
        }
    }

    @Test
    void shouldIgnoreNonFlowKeysAndUseDefaults() {
        FlowConfig c = new FlowConfig(Map.of("bootstrap.servers", "x:1", "num.stream.threads", "3"));
        assertThat(c.getString(FlowConfig.TOPICS_MODE_CONFIG)).isEqualTo("create");
        assertThat(c.getBoolean(FlowConfig.DEAD_LETTER_ENABLED_CONFIG)).isTrue();
    }

    @Test
    void shouldRejectBadValuesNamingKeyAndExpectation() {
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.TOPICS_MODE_CONFIG, "maybe")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("flow.topics.mode").hasMessageContaining("maybe");
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.REPLICATION_FACTOR_CONFIG, "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("must be -1 (broker default) or >= 1");
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.REPLICATION_FACTOR_CONFIG, "2",
                FlowConfig.MIN_INSYNC_REPLICAS_CONFIG, "3")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("must not exceed flow.topics.replication.factor=2");
        assertThatThrownBy(() -> new FlowConfig(Map.of(FlowConfig.PURGE_INTERVAL_MS_CONFIG, "-5")))
                .isInstanceOf(ConfigException.class).hasMessageContaining(FlowConfig.PURGE_INTERVAL_MS_CONFIG);
    }

    @Test
    void shouldRejectAMisspeltFlowKeyWithTheNearestOne() {
        // first-hour audit: flow.spec.warning=fail was ignored, leaving the warnings only logged
        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.spec.warning", "fail")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("flow.spec.warning is not a flow-kafka setting; did you mean 'flow.spec.warnings'? "
                        + "(every flow.* key is listed in docs/configuration.md)");
        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.something.else", "1")))
                .hasMessage("flow.something.else is not a flow-kafka setting (every flow.* key is listed in "
                        + "docs/configuration.md)");
    }

    @Test
    void shouldAcceptTheKeysReadByPrefix() {
        FlowConfig config = new FlowConfig(Map.of("flow.output.limit.records.counts", "5",
                "flow.serde.schema.registry.url", "http://r:8081", "flow.testing.watermark.sends", "interval",
                "flow.internal.anything", "x", "flow.spec.warnings", "fail",
                "flow.sink.out.bootstrap.servers", "other:9092"));
        assertThat(config.outputLimits(List.of("counts"))).containsEntry("counts", 5L);
    }

    /**
     * Docs/code audit: a misspelt sink id in flow.sink.<id>.bootstrap.servers left a TKafkaSink writing to the
     * pipeline's own cluster, and a misspelt stream in flow.output.limit.records.<stream> left it unlimited.
     */
    @Test
    void shouldRejectPrefixedKeysNamingNoSinkOrStream() {
        List<String> external = List.of("results", "audit");
        List<String> inTransaction = List.of("counts-out");
        List<String> streams = List.of("clicks", "counts");
        new FlowConfig(Map.of("flow.sink.results.bootstrap.servers", "other:9092", "flow.sink.audit.tick.ms", "5",
                "flow.output.limit.records.counts", "5")).rejectUnknownTargets(external, inTransaction, streams);

        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.sink.reslts.bootstrap.servers", "other:9092"))
                .rejectUnknownTargets(external, inTransaction, streams)).isInstanceOf(ConfigException.class)
                .hasMessage("flow.sink.reslts.bootstrap.servers: no sink 'reslts' reads flow.sink.<sink id>.* "
                        + "settings; did you mean 'flow.sink.results.'?");
        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.sink.counts-out.bootstrap.servers", "other:9092"))
                .rejectUnknownTargets(external, inTransaction, streams))
                .hasMessageContaining("sink 'counts-out' writes in the pipeline's transaction")
                .hasMessageContaining("make it a TKafkaSink");
        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.sink.results", "x"))
                .rejectUnknownTargets(external, inTransaction, streams))
                .hasMessage("flow.sink.results: names sink 'results' but no setting; e.g. "
                        + "flow.sink.results.bootstrap.servers");
        assertThatThrownBy(() -> new FlowConfig(Map.of("flow.output.limit.records.count", "5"))
                .rejectUnknownTargets(external, inTransaction, streams))
                .hasMessage("flow.output.limit.records.count: the spec declares no stream 'count'; did you mean "
                        + "'flow.output.limit.records.counts'?");
    }
}
