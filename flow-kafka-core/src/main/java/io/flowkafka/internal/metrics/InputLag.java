package io.flowkafka.internal.metrics;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;

/**
 * The records each input partition of this instance's tasks has not read yet, as its stream thread's main consumer
 * reports them ({@code records-lag} of {@code consumer-fetch-manager-metrics}: the last stable offset minus the
 * position under read_committed). Rule kept: no request to the brokers and no work per record; Kafka's metrics are
 * read at most once per {@link #REFRESH_NANOS} into a snapshot that every task's gauge reads.
 *
 * <p>Threading: {@link #bind} is called once by the runtime's start; {@link #lag} from any thread (scrapes).
 */
public final class InputLag {
    /** Key of this object in the Kafka Streams properties, where tasks find it. */
    public static final String CONFIG = "flow.internal.input.lag";
    /** At most one read of Kafka's metrics per second, however many tasks and scrapes. */
    static final long REFRESH_NANOS = 1_000_000_000L;

    private volatile Supplier<Map<MetricName, ? extends Metric>> metrics = Map::of;
    private Map<String, Double> snapshot = Map.of();
    private long refreshedAt = System.nanoTime() - 2 * REFRESH_NANOS;

    /** Reads the metrics of {@code metrics} (the Kafka Streams instance's) from now on. */
    public void bind(Supplier<Map<MetricName, ? extends Metric>> metrics) {
        this.metrics = metrics;
        synchronized (this) {
            refreshedAt = System.nanoTime() - 2 * REFRESH_NANOS;
        }
    }

    /**
     * The summed lag of {@code partitions}; NaN while the main consumer reports none of them (not fetched yet, or
     * not assigned to this instance).
     */
    public synchronized double lag(Collection<TopicPartition> partitions) {
        long now = System.nanoTime();
        if (now - refreshedAt >= REFRESH_NANOS) {
            snapshot = read(metrics.get());
            refreshedAt = now;
        }
        double sum = 0;
        boolean seen = false;
        for (TopicPartition tp : partitions) {
            Double lag = snapshot.get(key(tp.topic(), Integer.toString(tp.partition())));
            if (lag != null) {
                sum += lag;
                seen = true;
            }
        }
        return seen ? sum : Double.NaN;
    }

    /** The main consumers' {@code records-lag} per partition (not the restore or global consumers'). */
    static Map<String, Double> read(Map<MetricName, ? extends Metric> metrics) {
        Map<String, Double> out = new HashMap<>();
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (!"records-lag".equals(n.name()) || !"consumer-fetch-manager-metrics".equals(n.group())) {
                continue;
            }
            String client = n.tags().getOrDefault("client-id", "");
            String topic = n.tags().get("topic");
            String partition = n.tags().get("partition");
            if (!client.endsWith("-consumer") || client.endsWith("restore-consumer")
                    || client.endsWith("global-consumer") || topic == null || partition == null) {
                continue;
            }
            if (e.getValue().metricValue() instanceof Number v && !Double.isNaN(v.doubleValue())) {
                out.put(key(topic, partition), v.doubleValue());
            }
        }
        return out;
    }

    /** Kafka's fetch metrics tag a topic with its dots made underscores: both spellings meet here. */
    private static String key(String topic, String partition) {
        return topic.replace('.', '_') + "/" + partition;
    }
}
