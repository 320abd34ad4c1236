package io.flowkafka.internal.visitor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The key visitors of one task stepped together, each punctuation within one time bound. */
class VisitorDriverTest {
    private static final Schema TOTAL = SchemaBuilder.record("Total").fields().requiredLong("n").endRecord();

    private static KeyValueStore<Bytes, byte[]> store(String name) {
        KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return s;
    }

    @Test
    void shouldLetEveryVisitorAdvanceWhenAnotherUsesEachPunctuationsWholeTime() {
        // "every punctuation does a bounded amount of work": the bound is shared, so the visitor that steps first
        // changes from one punctuation to the next, or a visitor that is always behind would starve the others
        PipelineSpec pipeline = PipelineSpec.builder("p").computation("c", c -> c
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                .state("total", TOTAL)
                .keyVisitorStream(KeyVisitorStreamSpec.builder("slow").period(Duration.ofSeconds(1)).build())
                .keyVisitorStream(KeyVisitorStreamSpec.builder("other").period(Duration.ofSeconds(1)).build())
                .processingFunction(() -> null)).build();
        ComputationSpec spec = pipeline.computations().get("c");
        KeyValueStore<Bytes, byte[]> states = store("c.state");
        for (int i = 0; i < 100; i++) {
            byte[] key = ByteBuffer.allocate(12).putLong((long) i << 56).put(("k" + i).getBytes(StandardCharsets.UTF_8))
                    .array();
            states.put(KeyStates.storeKey(key, "total"), new byte[] {1});
        }
        VisitorDriver driver = new VisitorDriver(spec, "p", 0, 1, new KeyStates(states), store("c.coverage"),
                new DynamicSpec(pipeline), new StatusBoard(), new SimpleMeterRegistry(), 10_000, 1, name -> null);
        List<String> visited = new ArrayList<>();

        for (int punctuation = 0; punctuation < 4; punctuation++) {
            driver.step(100_000L * (punctuation + 1), v -> false, (stream, key, pass, ets, rows) -> {
                visited.add(stream);
                if (stream.equals("slow")) {
                    long until = System.nanoTime() + 2_000_000L; // a slow visit: past the 1 ms of the punctuation
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
            });
        }

        assertThat(visited).as("both visitors advanced").contains("slow", "other");
    }

    @Test
    void shouldTakeANewBackgroundFillPeriodAtTheNextPunctuation() {
        // key-visitors.md: dynamic settings take effect "at each task's next punctuation", not after the old wait
        PipelineSpec pipeline = PipelineSpec.builder("p").computation("c", c -> c
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                .state("total", TOTAL)
                .keyVisitorStream(KeyVisitorStreamSpec.builder("v").period(Duration.ofSeconds(1)).finite(false)
                        .backgroundFillPeriod(Duration.ofMinutes(10)).build())
                .processingFunction(() -> null)).build();
        ComputationSpec spec = pipeline.computations().get("c");
        KeyValueStore<Bytes, byte[]> states = store("c.state");
        for (int i = 0; i < 10; i++) {
            byte[] key = ByteBuffer.allocate(12).putLong((long) i << 56).put(("k" + i).getBytes(StandardCharsets.UTF_8))
                    .array();
            states.put(KeyStates.storeKey(key, "total"), new byte[] {1});
        }
        DynamicSpec dynamic = new DynamicSpec(pipeline);
        VisitorDriver driver = new VisitorDriver(spec, "p", 0, 1, new KeyStates(states), store("c.coverage"),
                dynamic, new StatusBoard(), new SimpleMeterRegistry(), 10_000, 0, name -> null);
        List<Long> passes = new ArrayList<>();
        for (long now = 1_000L; now <= 6_000L; now += 100) {
            driver.step(now, v -> false, (stream, key, pass, ets, rows) -> passes.add(pass));
        }
        assertThat(passes).as("no visit while the 10-minute background fill period runs").isEmpty();
        int first = passes.size();

        dynamic.apply(Map.of("computations", Map.of("c", Map.of("key_visitor_streams", Map.of("v",
                Map.of("background_fill_period", "100ms"))))));
        for (long now = 6_100L; now <= 9_000L; now += 100) {
            driver.step(now, v -> false, (stream, key, pass, ets, rows) -> passes.add(pass));
        }
        assertThat(passes.size()).as("passes after the change, seconds later, not ten minutes").isGreaterThan(first);
    }
}
