package io.flowkafka.benchmarks.waitclick;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a results topic with {@code read_committed} from the beginning while a job runs and checks
 * every result against the reference: one result per impression ({@code imp-N} keys), the expected
 * one ({@code joined} or {@code no_click}). Notes the wall-clock time of the first result, of the
 * moments a tenth, two tenths, ... of the impressions had their results, and of the moment every
 * impression had its result.
 */
final class OutputMeter implements AutoCloseable {
    static final byte JOINED = 1;
    static final byte NO_CLICK = 2;

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final byte[] expected;
    private final byte[] seen;
    private final CountDownLatch complete = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean stop;
    private volatile long firstAtMs = -1;
    private volatile long completeAtMs = -1;
    /** [k]: when k tenths of the impressions had their result (read by the caller after {@link #finish}). */
    private final long[] tenthAtMs = new long[11];
    private volatile long total;
    private volatile long distinct;
    private long joined;
    private long duplicates;
    private long wrong;
    private long unreadable;
    private volatile Throwable failure;

    OutputMeter(String bootstrap, String topic, int partitions, byte[] expected) {
        this.expected = expected;
        this.seen = new byte[expected.length];
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        consumer = new KafkaConsumer<>(p);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        tps.forEach(consumer::position); // positioned before the job starts
        thread = new Thread(this::run, "meter-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            while (!stop) {
                var records = consumer.poll(Duration.ofMillis(50));
                if (records.isEmpty()) {
                    continue;
                }
                long now = System.currentTimeMillis();
                if (firstAtMs < 0) {
                    firstAtMs = now;
                }
                long t = total;
                long d = distinct;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    t++;
                    int id = impressionNumber(r.key());
                    byte result = result(r.value());
                    if (id < 0 || id >= expected.length || result == 0) {
                        unreadable++;
                        continue;
                    }
                    if (result == JOINED) {
                        joined++;
                    }
                    if (seen[id] != 0) {
                        duplicates++;
                        continue;
                    }
                    seen[id] = result;
                    d++;
                    if (result != expected[id]) {
                        wrong++;
                    }
                }
                for (int k = 1; k <= 10; k++) {
                    if (tenthAtMs[k] == 0 && d * 10 >= (long) expected.length * k) {
                        tenthAtMs[k] = now;
                    }
                }
                total = t;
                distinct = d;
                if (d == expected.length && completeAtMs < 0) {
                    completeAtMs = now;
                    complete.countDown();
                }
            }
        } catch (Throwable e) {
            failure = e;
            complete.countDown();
        }
    }

    /** {@code N} of a key {@code imp-N}, or -1. */
    static int impressionNumber(byte[] key) {
        if (key == null || key.length < 5 || key[0] != 'i' || key[1] != 'm' || key[2] != 'p' || key[3] != '-') {
            return -1;
        }
        long n = 0;
        for (int i = 4; i < key.length; i++) {
            int c = key[i] - '0';
            if (c < 0 || c > 9 || n > Integer.MAX_VALUE) {
                return -1;
            }
            n = n * 10 + c;
        }
        return n > Integer.MAX_VALUE ? -1 : (int) n;
    }

    private static final byte[] RESULT_FIELD = "\"result\"".getBytes(StandardCharsets.UTF_8);

    /** The {@code result} field of a JSON value: {@link #JOINED}, {@link #NO_CLICK}, or 0. */
    static byte result(byte[] value) {
        if (value == null) {
            return 0;
        }
        int at = indexOf(value, RESULT_FIELD);
        if (at < 0) {
            return 0;
        }
        int i = at + RESULT_FIELD.length;
        while (i < value.length && (value[i] == ' ' || value[i] == ':')) {
            i++;
        }
        if (i >= value.length || value[i] != '"') {
            return 0;
        }
        int end = i + 1;
        while (end < value.length && value[end] != '"') {
            end++;
        }
        String s = new String(value, i + 1, end - i - 1, StandardCharsets.UTF_8);
        return s.equals("joined") ? JOINED : s.equals("no_click") ? NO_CLICK : 0;
    }

    private static int indexOf(byte[] a, byte[] b) {
        outer:
        for (int i = 0; i + b.length <= a.length; i++) {
            for (int j = 0; j < b.length; j++) {
                if (a[i + j] != b[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Waits until every impression has a result; false on timeout. */
    boolean awaitComplete(long ms) throws InterruptedException {
        return complete.await(ms, TimeUnit.MILLISECONDS) && failure == null;
    }

    boolean isComplete() {
        return completeAtMs >= 0;
    }

    long firstAtMs() {
        return firstAtMs;
    }

    long completeAtMs() {
        return completeAtMs;
    }

    /**
     * Wall-clock ms at which {@code k} tenths of the impressions had their result, or -1. Results lag
     * their input by at most the 30 minutes of event time an impression waits, so the time between two
     * tenths is the time the job took for a tenth of the input, without its start and its end.
     */
    long tenthAtMs(int k) {
        return tenthAtMs[k] == 0 ? -1 : tenthAtMs[k];
    }

    long distinct() {
        return distinct;
    }

    /** Stops reading (after the caller let it read a little longer for late duplicates) and summarizes. */
    Check finish() throws InterruptedException {
        stop = true;
        thread.join(10_000);
        consumer.close(Duration.ofSeconds(5));
        long expectedJoined = 0;
        for (byte b : expected) {
            if (b == JOINED) {
                expectedJoined++;
            }
        }
        return new Check(expected.length, total, distinct, joined, expectedJoined, duplicates, wrong, unreadable,
                failure);
    }

    @Override
    public void close() {
        stop = true;
    }

    /** What the results topic held. */
    record Check(long impressions, long results, long distinct, long joined, long expectedJoined, long duplicates,
            long wrong, long unreadable, Throwable failure) {
        boolean ok() {
            return failure == null && results == impressions && distinct == impressions && duplicates == 0
                    && wrong == 0 && unreadable == 0;
        }

        String problem() {
            if (ok()) {
                return "ok";
            }
            List<String> p = new ArrayList<>();
            if (failure != null) {
                p.add("meter failed: " + failure);
            }
            if (distinct < impressions) {
                p.add(String.format("%,d of %,d impressions have no result", impressions - distinct, impressions));
            }
            if (duplicates > 0) {
                p.add(String.format("%,d duplicate results", duplicates));
            }
            if (wrong > 0) {
                p.add(String.format("%,d results differ from the reference", wrong));
            }
            if (unreadable > 0) {
                p.add(String.format("%,d unreadable results", unreadable));
            }
            return String.join("; ", p);
        }

        @Override
        public String toString() {
            return String.format("%,d results for %,d impressions (%,d joined, reference %,d): %s", results, impressions,
                    joined, expectedJoined, problem());
        }
    }
}
