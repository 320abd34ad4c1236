package io.flowkafka.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
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

    /** The broker's counters now. */
    static BrokerRequests snapshot() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Map<String, Long> requests = new TreeMap<>();
        for (ObjectName name : server.queryNames(pattern("kafka.network:type=RequestMetrics,name=RequestsPerSec,*"),
                null)) {
            requests.merge(name.getKeyProperty("request"), number(server, name), Long::sum);
        }
        Map<String, Long> byTopic = new TreeMap<>();
        for (ObjectName name : server.queryNames(pattern("kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,"
                + "topic=*"), null)) {
            byTopic.put(name.getKeyProperty("topic"), number(server, name));
        }
        return new BrokerRequests(requests,
                number(server, pattern("kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec")),
                number(server, pattern("kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec")), byTopic);
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

    private static ObjectName pattern(String name) {
        try {
            return new ObjectName(name);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(name, e);
        }
    }

    /** The sum of {@code Count} over the beans matching {@code name}, 0 for beans that went away meanwhile. */
    private static long number(MBeanServer server, ObjectName name) {
        long total = 0;
        for (ObjectName n : server.queryNames(name, null)) {
            try {
                Object v = server.getAttribute(n, "Count");
                total += v instanceof Number x ? (long) x.doubleValue() : 0;
            } catch (JMException | RuntimeException e) {
                // the bean went away between the query and the read
            }
        }
        return total;
    }
}
