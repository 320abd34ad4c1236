package io.flowkafka.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The per-task gauges and the consumer lag they read, without a broker. */
class TaskMetersTest {
    private static final Tags TASK = Tags.of("pipeline", "p", "computation", "c", "partition", "1");

    @Test
    void shouldRegisterTheTaskGaugesAndRemoveThemAtClose() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InputLag lag = new InputLag();
        lag.bind(() -> metrics(Map.of("app-1-StreamThread-1-consumer", 7.0)));
        TaskMeters meters = new TaskMeters(registry, TASK, lag, List.of(new TopicPartition("p.a", 1)), true);
        meters.pendingTimers(12);
        long now = System.currentTimeMillis() * 1_000_000L;
        meters.watermarks(now - 30_000_000_000L, Long.MAX_VALUE);

        assertThat(registry.get(TaskMeters.INPUT_LAG).tags(TASK).gauge().value()).isEqualTo(7.0);
        assertThat(registry.get(TaskMeters.TIMERS_PENDING).tags(TASK).gauge().value()).isEqualTo(12.0);
        assertThat(registry.get(TaskMeters.WATERMARK_LAG).tags(TASK).tag("kind", "event").gauge().value())
                .isCloseTo(30.0, within(5.0));
        assertThat(registry.get(TaskMeters.WATERMARK_LAG).tags(TASK).tag("kind", "system").gauge().value())
                .as("complete").isZero();

        meters.close();
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void shouldLeaveOutTheTimerGaugeWithoutTimersAndShowNoWatermarkAsNaN() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new TaskMeters(registry, TASK, null, List.of(new TopicPartition("t", 1)), false);

        assertThat(registry.find(TaskMeters.TIMERS_PENDING).meters()).isEmpty();
        assertThat(registry.find(TaskMeters.INPUT_LAG).meters()).as("no lag source (a test driver)").isEmpty();
        assertThat(registry.get(TaskMeters.WATERMARK_LAG).tag("kind", "event").gauge().value()).isNaN();
    }

    @Test
    void shouldSumTheMainConsumersLagOfTheTaskPartitionsOnly() {
        Map<MetricName, Metric> m = new LinkedHashMap<>();
        m.putAll(lagMetric("app-1-StreamThread-1-consumer", "p_a", 1, 5));
        m.putAll(lagMetric("app-1-StreamThread-2-consumer", "src", 1, 2));
        m.putAll(lagMetric("app-1-StreamThread-1-consumer", "p_a", 0, 100)); // another task's partition
        m.putAll(lagMetric("app-1-StreamThread-1-restore-consumer", "p_a", 1, 1000));
        m.putAll(lagMetric("app-1-global-consumer", "p_a", 1, 1000));
        InputLag lag = new InputLag();
        lag.bind(() -> m);

        assertThat(lag.lag(List.of(new TopicPartition("p.a", 1), new TopicPartition("src", 1)))).isEqualTo(7.0);
        assertThat(lag.lag(List.of(new TopicPartition("other", 1)))).as("not fetched").isNaN();
    }

    private static Map<MetricName, Metric> metrics(Map<String, Double> lagByClient) {
        Map<MetricName, Metric> m = new LinkedHashMap<>();
        lagByClient.forEach((client, v) -> m.putAll(lagMetric(client, "p_a", 1, v)));
        return m;
    }

    private static Map<MetricName, Metric> lagMetric(String client, String topic, int partition, double value) {
        MetricName name = new MetricName("records-lag", "consumer-fetch-manager-metrics", "",
                Map.of("client-id", client, "topic", topic, "partition", Integer.toString(partition)));
        return Map.of(name, new Metric() {
            @Override
            public MetricName metricName() {
                return name;
            }

            @Override
            public Object metricValue() {
                return value;
            }
        });
    }
}
