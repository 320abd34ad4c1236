package io.flowkafka.examples.hourlytables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.testing.FlowTestDriver;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HourlyTables} on the test driver. The driver runs no sink writers, so it shows what the pipeline hands to the
 * sink in the topic {@code <pipeline>.outbox.<sink>}; {@code HourlyTablesIT} writes real tables.
 */
class HourlyTablesTest {
    @TempDir
    Path dir;

    @Test
    void shouldHandEveryViewToTheTableSink() {
        try (FlowTestDriver driver = FlowTestDriver.create(HourlyTables.spec("ht", "page-views", dir.toString()))) {
            driver.pipeSource("page-views", "u1", "{\"user\":\"u1\",\"url\":\"/a\",\"bytes\":120}");
            driver.pipeSource("page-views", "u2", "{\"user\":\"u2\",\"url\":\"/b\",\"bytes\":80}");
            assertThat(driver.readTopic("ht.outbox." + HourlyTables.SINK)).hasSize(2);
        }
    }

    @Test
    void shouldRejectASpecWithoutTableTtlBeforeStart() {
        // reference 001: "The mandatory table_ttl parameter bounds the lifetime of the output tables"
        var spec = HourlyTables.spec("ht", "page-views", dir.toString());
        var computation = spec.computations().get("read");
        var sink = computation.sinks().get(0);
        var params = new java.util.HashMap<>(sink.parameters());
        params.remove("table_ttl");
        assertThatThrownBy(() -> io.flowkafka.spec.PipelineSpec.builder("ht").stream("raw", HourlyTables.VIEW)
                .stream("views", HourlyTables.VIEW)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", java.util.Map.of("topics", "page-views"))
                        .outputStreamIds("views")
                        .sink(HourlyTables.SINK, "TArrivalOrderTableSink", java.util.List.of("views"), params))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("table_ttl");
    }
}
