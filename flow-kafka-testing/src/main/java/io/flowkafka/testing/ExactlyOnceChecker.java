package io.flowkafka.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Checks that a topic holds every expected message exactly once, as a read_committed consumer
 * sees it.
 *
 * <pre>{@code
 * ExactlyOnceChecker.Report report =
 *     ExactlyOnceChecker.check(cluster, output, expectedIds, Duration.ofSeconds(30));
 * assertThat(report.isExact()).as(report.toString()).isTrue();
 * }</pre>
 *
 * <p>Thread-safe: it holds no state; each {@code check} uses its own consumer.
 */
public final class ExactlyOnceChecker {
    /** The header whose bytes, in lowercase hex, identify a message by default. */
    public static final String ID_HEADER = "flow.id";

    private ExactlyOnceChecker() {}

    /**
     * What a check found: the messages lost, duplicated and unexpected.
     *
     * <p>Immutable; the collections are sorted copies.
     *
     * @param lost expected ids never seen
     * @param duplicated ids seen more than once, each with the number of times seen; an
     *     unexpected id seen twice is in both {@code duplicated} and {@code unexpected}
     * @param unexpected ids seen but not expected
     * @param total records read
     */
    public record Report(SortedSet<String> lost, SortedMap<String, Integer> duplicated,
            SortedSet<String> unexpected, long total) {
        private static final int SHOWN = 10;

        /**
         * Copies and validates the parts.
         *
         * @param lost expected ids never seen
         * @param duplicated ids seen more than once, with the number of times seen
         * @param unexpected ids seen but not expected
         * @param total records read, not negative
         * @throws IllegalArgumentException if {@code total} is negative
         */
        public Report {
            lost = Collections.unmodifiableSortedSet(new TreeSet<>(lost));
            duplicated = Collections.unmodifiableSortedMap(new TreeMap<>(duplicated));
            unexpected = Collections.unmodifiableSortedSet(new TreeSet<>(unexpected));
            if (total < 0) {
                throw new IllegalArgumentException("total must be >= 0 but was " + total);
            }
        }

        /**
         * Whether every expected id was seen exactly once and nothing else was seen.
         *
         * @return true if nothing was lost, duplicated or unexpected
         */
        public boolean isExact() {
            return lost.isEmpty() && duplicated.isEmpty() && unexpected.isEmpty();
        }

        /**
         * A summary with counts and the first {@value #SHOWN} ids of each kind, such as
         * {@code total=1000, lost=1 [a7], duplicated=1 [b3=2], unexpected=0 []}.
         */
        @Override
        public String toString() {
            return "total=" + total
                    + ", lost=" + lost.size() + " " + first(lost.stream().toList())
                    + ", duplicated=" + duplicated.size() + " " + first(duplicated.entrySet()
                            .stream().map(e -> e.getKey() + "=" + e.getValue()).toList())
                    + ", unexpected=" + unexpected.size() + " " + first(unexpected.stream().toList());
        }

        private static String first(List<String> ids) {
            String shown = ids.stream().limit(SHOWN).collect(Collectors.joining(", ", "[", ""));
            return shown + (ids.size() > SHOWN ? ", ...]" : "]");
        }
    }

    /**
     * Compares the ids seen with the ids expected; needs no broker.
     *
     * @param seenIds every id read, once per record, in any order
     * @param expectedIds the ids that should each appear exactly once
     * @return what was lost, duplicated and unexpected
     */
    public static Report compare(Collection<String> seenIds, Set<String> expectedIds) {
        Objects.requireNonNull(seenIds, "seenIds");
        Objects.requireNonNull(expectedIds, "expectedIds");
        Map<String, Integer> counts = new HashMap<>();
        for (String id : seenIds) {
            counts.merge(Objects.requireNonNull(id, "seenIds must not contain null"), 1, Integer::sum);
        }
        SortedSet<String> lost = new TreeSet<>();
        for (String id : expectedIds) {
            if (!counts.containsKey(id)) {
                lost.add(id);
            }
        }
        SortedMap<String, Integer> duplicated = new TreeMap<>();
        SortedSet<String> unexpected = new TreeSet<>();
        counts.forEach((id, n) -> {
            if (n > 1) {
                duplicated.put(id, n);
            }
            if (!expectedIds.contains(id)) {
                unexpected.add(id);
            }
        });
        return new Report(lost, duplicated, unexpected, seenIds.size());
    }

    /**
     * Reads {@code topic} with the default id extractor, {@link #defaultId}, and compares.
     *
     * @param cluster the cluster holding the topic
     * @param topic the topic to read
     * @param expectedIds the ids that should each appear exactly once
     * @param bound how long to read at most
     * @see #check(KafkaCluster, String, Set, Duration, Function)
     * @return what was lost, duplicated and unexpected
     */
    public static Report check(KafkaCluster cluster, String topic, Set<String> expectedIds,
            Duration bound) {
        return check(cluster, topic, expectedIds, bound, ExactlyOnceChecker::defaultId);
    }

    /**
     * Reads every partition of {@code topic} from the beginning with a read_committed consumer and
     * compares the ids found with {@code expectedIds}.
     *
     * <p>Reading stops once every expected id has been read and the consumer has reached the end
     * of every partition (the last stable offset), so duplicates already committed are counted;
     * or when {@code bound} has passed, in which case missing records show as lost (an
     * at-least-once run's duplicates do not end the reading before the last expected id). A topic that does not exist within {@code bound} reads as empty.
     * Transactions still open are not waited for.
     *
     * @param cluster the cluster holding the topic
     * @param topic the topic to read
     * @param expectedIds the ids that should each appear exactly once
     * @param bound how long to read at most; must be positive
     * @param idOf extracts a message id from each record; must not return null
     * @return what was lost, duplicated and unexpected
     * @throws IllegalArgumentException if {@code bound} is not positive
     * @throws NullPointerException if {@code idOf} returns null
     * @throws org.apache.kafka.common.KafkaException if the consumer fails
     */
    public static Report check(KafkaCluster cluster, String topic, Set<String> expectedIds,
            Duration bound, Function<ConsumerRecord<byte[], byte[]>, String> idOf) {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(expectedIds, "expectedIds");
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(idOf, "idOf");
        if (bound.isNegative() || bound.isZero()) {
            throw new IllegalArgumentException("bound must be positive but was " + bound);
        }
        long deadline = System.nanoTime() + bound.toNanos();
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "flowkafka-exactly-once-checker-" + topic);
        List<String> seen = new ArrayList<>();
        Set<String> missing = new HashSet<>(expectedIds);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props,
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = partitions(consumer, topic, deadline);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (!partitions.isEmpty()) {
                Duration remaining = remaining(deadline);
                if (remaining.isZero()) {
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(min(remaining, 200))) {
                    String id = Objects.requireNonNull(idOf.apply(record), "idOf returned null");
                    seen.add(id);
                    missing.remove(id);
                }
                if (missing.isEmpty() && atEnd(consumer, partitions, deadline)) {
                    break;
                }
            }
        }
        return compare(seen, expectedIds);
    }

    /**
     * The default id of a record: the {@value #ID_HEADER} header's bytes in lowercase hex if the
     * header is present, else the key as UTF-8, else {@code <no id at topic-partition@offset>}.
     *
     * @param record a record read from the topic
     * @return the record's id
     */
    public static String defaultId(ConsumerRecord<byte[], byte[]> record) {
        Header header = record.headers().lastHeader(ID_HEADER);
        if (header != null && header.value() != null) {
            return HexFormat.of().formatHex(header.value());
        }
        if (record.key() != null) {
            return new String(record.key(), StandardCharsets.UTF_8);
        }
        return "<no id at " + record.topic() + "-" + record.partition() + "@" + record.offset() + ">";
    }

    private static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic,
            long deadline) {
        Duration remaining = remaining(deadline);
        if (remaining.isZero()) {
            return List.of();
        }
        try {
            return Await.poll(remaining, "topic " + topic + " exists", () -> {
                try {
                    return consumer.partitionsFor(topic, min(remaining(deadline), 1000)).stream()
                            .map(p -> new TopicPartition(topic, p.partition())).toList();
                } catch (TimeoutException e) {
                    return List.<TopicPartition>of();
                }
            }, list -> !list.isEmpty(), false, NoSuchTopic::new);
        } catch (NoSuchTopic e) {
            return List.of();
        }
    }

    private static final class NoSuchTopic extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoSuchTopic(String message) {
            super(message, null, false, false);
        }
    }

    private static boolean atEnd(KafkaConsumer<?, ?> consumer, List<TopicPartition> partitions,
            long deadline) {
        try {
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, min(remaining(deadline), 2000));
            for (TopicPartition tp : partitions) {
                if (consumer.position(tp, min(remaining(deadline), 2000)) < end.get(tp)) {
                    return false;
                }
            }
            return true;
        } catch (TimeoutException e) {
            return false;
        }
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    private static Duration min(Duration d, long millis) {
        return d.toMillis() < millis ? d : Duration.ofMillis(millis);
    }
}
