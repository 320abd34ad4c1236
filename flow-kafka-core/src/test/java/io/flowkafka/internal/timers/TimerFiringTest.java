package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.RowFunction;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.File;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TimerFiring}: the fired-timer counter counts steps that returned. */
class TimerFiringTest {
    @TempDir
    File stateDir;

    @Test
    void shouldNotCountTheTimersOfAStepThatFailed() {
        // before: a step whose second call failed (an outage) counted the first, which the replay fires again
        ComputationSpec spec = ComputationSpec.builder("comp").inputStreamIds("in")
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                .processingFunction(() -> (RowFunction) (m, o, c) -> { })
                .timer("dedup", Map.of()).timer("all", Map.of()).build();
        try (TimerTestStores stores = TimerTestStores.inMemory(stateDir)) {
            TimerStore store = new TimerStore(stores.timers, stores.holds, AbstractTimerStoreTest.STREAMS,
                    AbstractTimerStoreTest.DEDUP);
            byte[] id = new byte[12];
            store.add(new PendingTimer(0, 10, 10, 1, AbstractTimerStoreTest.key("ann"), id, List.of()));
            store.add(new PendingTimer(0, 20, 20, 1, AbstractTimerStoreTest.key("bob"), id, List.of()));
            store.commitCall();
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            TimerFiring firing = new TimerFiring(spec, store, o -> false, 100, 1_000, meters, List.of(), false);
            assertThatThrownBy(() -> firing.step(i -> i == 0 ? 100 : Long.MIN_VALUE, t -> {
                if (t.triggerTs() == 20) {
                    throw new IllegalStateException("the service is down");
                }
                store.delete(t);
                store.commitCall();
            })).hasMessage("the service is down");
            assertThat(meters.get("flow.timers.fired").counter().count()).isZero();
            firing.step(i -> i == 0 ? 100 : Long.MIN_VALUE, t -> {
                store.delete(t);
                store.commitCall();
            });
            assertThat(meters.get("flow.timers.fired").counter().count()).isEqualTo(1.0);
        }
    }
}
