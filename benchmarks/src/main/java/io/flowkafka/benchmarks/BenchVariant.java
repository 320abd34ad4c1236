package io.flowkafka.benchmarks;

import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The settings a benchmark run varies from the command line, one at a time: {@code -D<prefix>broker.<key>=<value>}
 * for the in-JVM broker and {@code -D<prefix>streams.<property>=<value>} for every job's Streams and client
 * properties ({@code flow.*} ones for flow-kafka jobs only). Keeps the rule that a run's description names every
 * setting it changed, so two runs compare only with what they say.
 *
 * @param prefix the system property prefix, such as {@code bench.} or {@code probe.}
 */
record BenchVariant(String prefix) {
    /** The broker settings given as {@code -D<prefix>broker.<key>=<value>}; empty by default (Kafka's). */
    Map<String, String> brokerConfig() {
        return withPrefix(prefix + "broker.");
    }

    /** Adds the {@code -D<prefix>streams.*} properties to {@code props} of a job; {@code flow.*} ones if it is flow-kafka. */
    void applyStreams(Properties props, boolean flowJob) {
        withPrefix(prefix + "streams.").forEach((k, v) -> {
            if (flowJob || !k.startsWith("flow.")) {
                props.put(k, v);
            }
        });
    }

    /** The settings this run changed, for its description; empty if none. */
    String describe() {
        List<String> set = System.getProperties().stringPropertyNames().stream()
                .filter(k -> k.startsWith(prefix + "streams.") || k.startsWith(prefix + "broker.")
                        || k.equals(EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY))
                .sorted().map(k -> k + "=" + System.getProperty(k)).toList();
        return set.isEmpty() ? "" : String.join(", ", set) + "; ";
    }

    private static Map<String, String> withPrefix(String p) {
        Map<String, String> out = new TreeMap<>();
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith(p))
                .forEach(k -> out.put(k.substring(p.length()), System.getProperty(k)));
        return out;
    }
}
