package io.flowkafka.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The broker's share of one benchmark run: the requests the in-JVM broker answered, by type, and the bytes it took
 * in and sent out, read from its JMX beans before and after the run (never per record). It shows where two jobs
 * differ in broker work (produce requests, fetches, transaction markers, purges). Counts cover every client of the
 * broker during the run, the benchmark's own producer and meter included.
 *
 * <p>Threading: a snapshot is immutable.
 *
 * @param requests requests answered, by request type
 * @param bytesIn bytes the broker appended from producers
 * @param bytesOut bytes the broker sent to consumers and followers
 * @param bytesInByTopic bytes appended from producers, by topic
 */
record BrokerRequests(Map<String, Long> requests, long bytesIn, long bytesOut, Map<String, Long> bytesInByTopic) {

    private static final String REQUESTS = "kafka.network:type=RequestMetrics,name=RequestsPerSec,*";
    private static final String BYTES_IN = "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec";
    private static final String BYTES_OUT = "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec";

    /** The broker's counters now. */
    static BrokerRequests snapshot() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Map<String, Long> requests = new TreeMap<>();
        for (ObjectName name : TransactionCounts.query(server, REQUESTS)) {
            requests.merge(name.getKeyProperty("request"), count(server, name.toString()), Long::sum);
        }
        Map<String, Long> byTopic = new TreeMap<>();
        for (ObjectName name : TransactionCounts.query(server, BYTES_IN + ",topic=*")) {
            byTopic.put(name.getKeyProperty("topic"), count(server, name.toString()));
        }
        return new BrokerRequests(requests, count(server, BYTES_IN), count(server, BYTES_OUT), byTopic);
    }

    /** This run's counts: from {@code before} to this snapshot, request types with none left out. */
    BrokerRequests since(BrokerRequests before) {
        Map<String, Long> diff = new TreeMap<>();
        requests.forEach((type, count) -> {
            long d = count - before.requests.getOrDefault(type, 0L);
            if (d > 0) {
                diff.put(type, d);
            }
        });
        Map<String, Long> byTopic = new TreeMap<>();
        bytesInByTopic.forEach((topic, bytes) -> {
            long d = bytes - before.bytesInByTopic.getOrDefault(topic, 0L);
            if (d > 0) {
                byTopic.put(topic, d);
            }
        });
        return new BrokerRequests(diff, bytesIn - before.bytesIn, bytesOut - before.bytesOut, byTopic);
    }

    /** The bytes appended to each topic whose name starts with {@code prefix} (left out), most first, in kB. */
    String bytesIn(String prefix) {
        return bytesInByTopic.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> e.getKey().substring(prefix.length()) + " " + e.getValue() / 1000 + " kB")
                .collect(Collectors.joining(", "));
    }

    /** One line for the run's report: the request types, most first, and the bytes. */
    String describe() {
        Map<String, Long> sorted = new LinkedHashMap<>();
        requests.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return String.format(Locale.ROOT, "broker: %.1f MB in, %.1f MB out; requests %s", bytesIn / 1e6,
                bytesOut / 1e6, sorted.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                        .collect(Collectors.joining(", ")));
    }

    /** The {@code Count} of the bean {@code name}, or the sum over the beans a pattern matches. */
    private static long count(MBeanServer server, String name) {
        return TransactionCounts.sum(server, name, "Count");
    }
}
