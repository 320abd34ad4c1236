package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import io.flowkafka.testing.FlowTestDriver;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** Spec-load rules of the non-batching ClickHouse sinks: no accepted parameter silently ignored. */
class DirectSinkParametersTest {
    private final ClickHouseDirectSinkProvider provider = new ClickHouseDirectSinkProvider();

    private static SinkSpec sink(String cls, Map<String, Object> more) {
        Map<String, Object> p = new HashMap<>(Map.of("url", "http://127.0.0.1:8123", "table", "events"));
        p.putAll(more);
        return new SinkSpec("ch", cls, List.of("events"), p);
    }

    @Test
    void shouldAcceptTheSharedParametersAndMaxInsertAttempts() {
        assertThat(provider.validate(sink(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE, Map.of("max_insert_attempts", 3,
                "database", "db", "message_id_column", "mid", "write_timeout", "5s", "format", "avro")))).isEmpty();
        assertThat(DirectSinkParameters.of(sink(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE, Map.of()))
                .maxInsertAttempts()).isEqualTo(10);
        assertThat(provider.validate(sink(ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, Map.of()))).isEmpty();
        // the strategy's own fields are the core spec validator's to check
        SinkSpec queued = sink(ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, Map.of("at_most_once_strategy",
                Map.of("enabled", true, "total_queue_bytes_limit", 1000)));
        assertThat(provider.validate(queued)).isEmpty();
        assertThat(DirectSinkParameters.of(queued).common().table()).isEqualTo("events");
    }

    @Test
    void shouldRejectParametersOnlyTheBatchingSinksUseWithTheFix() {
        List<Problem> problems = provider.validate(sink(ClickHouseDirectSinkProvider.T_AT_MOST_ONCE,
                Map.of("max_batch_records", 10, "replay_horizon", "1d", "max_insert_attempts", 3)));
        assertThat(problems).extracting(Problem::field).containsExactly("parameters.max_batch_records",
                "parameters.max_insert_attempts", "parameters.replay_horizon");
        assertThat(problems.get(1).message()).contains("TAtMostOnceClickHouseSink 'ch'", "never retried");
        assertThat(problems.get(1).fix()).startsWith("remove max_insert_attempts");
    }

    @Test
    void shouldRejectABadUrlAndAttemptsBelowOneNamingTheSinkClass() {
        List<Problem> problems = provider.validate(sink(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE,
                Map.of("url", "ftp://x", "max_insert_attempts", 0)));
        assertThat(problems).extracting(Problem::field).containsExactly("parameters.url",
                "parameters.max_insert_attempts");
        assertThat(problems.get(0).message()).startsWith("TAtLeastOnceClickHouseSink 'ch'");
        assertThat(problems.get(1).fix()).contains("e.g. 10");
    }

    @Test
    void shouldBeSynchronousOnlyForAtLeastOnceAndAllowTheStrategyOnlyForAtMostOnce() {
        SinkSpec alo = sink(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE, Map.of());
        SinkSpec amo = sink(ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, Map.of());
        assertThat(provider.synchronous(alo)).isTrue();
        assertThat(provider.synchronous(amo)).isFalse();
        assertThat(provider.supportsAtMostOnce(alo)).isFalse();
        assertThat(provider.supportsAtMostOnce(amo)).isTrue();
    }

    @Test
    void shouldShowTheAtLeastOnceSinksRowsOnTheDriverInATopicNamedAfterIt() {
        // parity audit: on the test driver the rows went to a topic literally named "null", shared by such sinks
        Schema event = SchemaBuilder.record("Event").namespace("ch").fields().requiredString("id").endRecord();
        PipelineSpec spec = PipelineSpec.builder("chd").stream("raw", event).stream("events", event)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events")
                        .sink(sink(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE, Map.of())))
                .build();
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("in", "k", "{\"id\":\"a\"}");
            assertThat(driver.readSinkJson("chd.sink.read.ch")).containsExactly("{\"id\":\"a\"}");
        }
    }
}
