package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** {@link HttpSinkMeters}: the blocked gauge is the sink's, over all its outbox partitions. */
class HttpSinkMetersTest {
    @Test
    void shouldStayBlockedWhileAnyPartitionIsBlocked() {
        // before: a success on partition 5 set the gauge to 0 while partition 3 was still blocked
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HttpSinkMeters meters = new HttpSinkMeters(registry, "p", "hooks");
        meters.blocked(3, true);
        meters.blocked(5, false);
        assertThat(gauge(registry)).isEqualTo(1.0);
        meters.blocked(3, false);
        assertThat(gauge(registry)).isZero();
        meters.blocked(4, true);
        meters.blocked(4, false); // released: revoked from this instance
        assertThat(gauge(registry)).isZero();
    }

    private static double gauge(SimpleMeterRegistry registry) {
        return registry.get("flow.sink.http.blocked").tags("pipeline", "p", "sink", "hooks").gauge().value();
    }
}
