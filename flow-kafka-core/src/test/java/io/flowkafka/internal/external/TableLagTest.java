package io.flowkafka.internal.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;

/** The table lag gauge sums the global consumer's records-lag of the topic's partitions. */
class TableLagTest {
    private static Metric value(double v) {
        return new Metric() {
            @Override
            public MetricName metricName() {
                return null;
            }

            @Override
            public Object metricValue() {
                return v;
            }
        };
    }

    private static MetricName lag(String client, String topic, int partition) {
        return new MetricName("records-lag", "consumer-fetch-manager-metrics", "",
                Map.of("client-id", client, "topic", topic, "partition", Integer.toString(partition)));
    }

    @Test
    void theLagOfATopicIsTheGlobalConsumersRecordsLagSummedOverItsPartitions() {
        Map<MetricName, Metric> metrics = new LinkedHashMap<>();
        assertThat(TableLag.lag(metrics, "p.external.t")).isNaN();
        metrics.put(lag("app-1-global-consumer", "p_external_t", 0), value(3));
        metrics.put(lag("app-1-global-consumer", "p_external_t", 1), value(4));
        metrics.put(lag("app-1-StreamThread-1-consumer", "p_external_t", 0), value(100));
        metrics.put(lag("app-1-global-consumer", "other", 0), value(100));
        assertThat(TableLag.lag(metrics, "p.external.t")).isEqualTo(7.0);
    }
}
