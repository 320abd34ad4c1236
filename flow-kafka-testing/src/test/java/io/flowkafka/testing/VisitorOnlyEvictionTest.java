package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A computation with only a visit stream that owns its table (reference 000, "Computation with only a visit
 * stream"): no input, no source, a manager, and a {@code finite: false} visitor over the manager's rows that evicts
 * the expired ones with {@code clear()} ("evict outdated records via clear() in the visit handler").
 */
class VisitorOnlyEvictionTest {
    static final Schema ROW = SchemaBuilder.record("Lease").namespace("vo").fields().requiredLong("expires_ms")
            .endRecord();
    static final Schema UNUSED = SchemaBuilder.record("Unused").namespace("vo").fields().requiredString("x")
            .endRecord();

    /** Clears each row whose {@code expires_ms} passed at the visit's time. */
    public static final class Evictor implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            throw new IllegalStateException("no input");
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            var lease = context.getExternalState("/leases");
            long now = visit.getSystemTimestamp() / 1_000_000L;
            if (lease.get().map(r -> (Long) r.get("expires_ms") < now).orElse(false)) {
                lease.clear();
            }
        }
    }

    private FlowTestDriver driver;

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no call failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    @Test
    void shouldEvictExpiredRowsPassAfterPassWithoutAnyInput() {
        driver = FlowTestDriver.create(PipelineSpec.builder("vo").stream("unused", UNUSED)
                .computation("evictor", c -> c.groupBy("hash", ColumnType.UINT64, "farm_hash(id)")
                        .groupBy("id", ColumnType.STRING, null).processingFunction(Evictor::new)
                        .externalStateManager(ExternalStateManagerSpec.of("/leases", ROW))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder("sweep").externalNames("/leases")
                                .period(Duration.ofSeconds(10)).finite(false).build()))
                .build());
        DriverExternalTable leases = driver.externalTable("evictor", "/leases");
        long now = driver.wallClockTime().toEpochMilli();
        for (int i = 0; i < 10; i++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("expires_ms", now + (i < 5 ? 5_000 : 25_000));
            leases.put(Map.of("id", "l" + i), r);
        }
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100)); // pass 0: nothing expired yet
        assertThat(leases.get(Map.of("id", "l0"))).isPresent();
        driver.advanceWallClockTime(Duration.ofSeconds(10), Duration.ofMillis(100)); // pass 1: l0..l4 expired
        for (int i = 0; i < 10; i++) {
            assertThat(leases.get(Map.of("id", "l" + i)).isPresent()).as("l%d", i).isEqualTo(i >= 5);
        }
        driver.advanceWallClockTime(Duration.ofSeconds(20), Duration.ofMillis(100)); // passes 2, 3: the rest
        for (int i = 0; i < 10; i++) {
            assertThat(leases.get(Map.of("id", "l" + i))).as("l%d", i).isEmpty();
        }
        assertThat(driver.completedComputations()).as("finite: false scans for the pipeline's lifetime")
                .doesNotContain("evictor");
    }
}
