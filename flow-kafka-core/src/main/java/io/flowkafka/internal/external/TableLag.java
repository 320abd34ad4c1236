package io.flowkafka.internal.external;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * The gauge {@code flow.external.lag_records} of each external table topic: how many records of the topic the
 * instance's global stores have not applied yet, so how stale a joiner's reads may be.
 *
 * <p>Rule kept: read from Kafka's own metrics of the global thread's consumer (client id
 * {@code <client.id>-global-consumer}, {@code records-lag} per partition, summed), not computed here: no extra
 * request to the brokers. NaN until the global consumer has fetched the topic.
 */
public final class TableLag {
    /** The gauge's name. */
    public static final String GAUGE = "flow.external.lag_records";

    private TableLag() {
    }

    /**
     * Registers one gauge per topic.
     *
     * @param pipeline the pipeline's name (a tag)
     * @param topics the table topics read
     * @param metrics Kafka Streams' metrics ({@code KafkaStreams::metrics})
     * @param registry where to register
     * @return the gauges, to remove when the runtime closes
     */
    public static List<Meter> register(String pipeline, Collection<String> topics,
            Supplier<Map<MetricName, ? extends Metric>> metrics, MeterRegistry registry) {
        List<Meter> out = new ArrayList<>();
        for (String topic : topics) {
            out.add(Gauge.builder(GAUGE, () -> lag(metrics.get(), topic))
                    .description("records of an external table topic the global stores have not applied yet")
                    .tags("pipeline", pipeline, "topic", topic).register(registry));
        }
        return out;
    }

    /** The summed {@code records-lag} of {@code topic}'s partitions for the global consumer; NaN if unknown. */
    static double lag(Map<MetricName, ? extends Metric> metrics, String topic) {
        double sum = 0;
        boolean seen = false;
        String escaped = topic.replace('.', '_');
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (!"records-lag".equals(n.name()) || !"consumer-fetch-manager-metrics".equals(n.group())) {
                continue;
            }
            String client = n.tags().getOrDefault("client-id", "");
            String t = n.tags().get("topic");
            if (!client.endsWith("global-consumer") || t == null || !(t.equals(topic) || t.equals(escaped))) {
                continue;
            }
            Object v = e.getValue().metricValue();
            if (v instanceof Number num && !Double.isNaN(num.doubleValue())) {
                sum += num.doubleValue();
                seen = true;
            }
        }
        return seen ? sum : Double.NaN;
    }
}
