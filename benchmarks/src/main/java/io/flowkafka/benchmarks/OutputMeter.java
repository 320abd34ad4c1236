package io.flowkafka.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * Reads a job's output topic with a {@code read_committed} consumer on its own thread: counts the
 * committed records (throughput) and, in paced runs, keeps each record's
 * {@code receive time - record timestamp} in ms (latency). Every job keeps the input record's
 * timestamp (its send time) on its output record.
 *
 * <p>Thread-safe accessors; one reader thread.
 */
final class OutputMeter implements AutoCloseable {
    private final Thread thread;
    private final Object lock = new Object();
    private volatile boolean stop;
    private volatile long count;
    private volatile long firstNanos;
    private final boolean recordLatency;
    private long target = Long.MAX_VALUE;
    private long targetReachedNanos;
    private long[] timestamps = new long[0];
    private long[] latencies = new long[0];
    private int latencyCount;
    private volatile @Nullable Throwable failure;

    /**
     * Starts reading {@code topic} from the beginning.
     *
     * @param recordLatency whether to keep every record's timestamp and latency (paced runs)
     */
    OutputMeter(String bootstrap, String topic, int partitions, boolean recordLatency) {
        this.recordLatency = recordLatency;
        if (recordLatency) {
            timestamps = new long[1 << 16];
            latencies = new long[1 << 16];
        }
        Properties p = consumerProps(bootstrap);
        thread = new Thread(() -> run(p, topic, partitions), "bench-output-meter");
        thread.setDaemon(true);
        thread.start();
    }

    static Properties consumerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        // the broker answers a read_committed fetch when the transaction commits; this only bounds the wait
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "20");
        return p;
    }

    private static List<TopicPartition> partitions(String topic, int n) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        return tps;
    }

    private void run(Properties props, String topic, int partitions) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = partitions(topic, partitions);
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (!stop) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(50));
                if (records.isEmpty()) {
                    continue;
                }
                long nowMs = System.currentTimeMillis();
                long nowNanos = System.nanoTime();
                synchronized (lock) {
                    if (count == 0) {
                        firstNanos = nowNanos;
                    }
                    if (recordLatency) {
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            if (latencyCount == latencies.length) {
                                latencies = Arrays.copyOf(latencies, latencies.length * 2);
                                timestamps = Arrays.copyOf(timestamps, timestamps.length * 2);
                            }
                            timestamps[latencyCount] = r.timestamp();
                            latencies[latencyCount++] = nowMs - r.timestamp();
                        }
                    }
                    count += records.count();
                    if (count >= target && targetReachedNanos == 0) {
                        targetReachedNanos = nowNanos;
                        lock.notifyAll();
                    }
                }
            }
        } catch (Throwable t) {
            failure = t;
            synchronized (lock) {
                lock.notifyAll();
            }
        }
    }

    /**
     * Waits until {@code n} records were read.
     *
     * @return System.nanoTime() of the poll that reached {@code n}, or -1 on timeout
     */
    long awaitCount(long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            target = n;
            if (count >= n && targetReachedNanos == 0) {
                targetReachedNanos = System.nanoTime();
            }
            while (targetReachedNanos == 0 && failure == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return -1;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, Math.max(1, left));
            }
            checkFailure();
            return targetReachedNanos;
        }
    }

    private void checkFailure() {
        Throwable t = failure;
        if (t != null) {
            throw new IllegalStateException("the output meter failed: " + t, t);
        }
    }

    long count() {
        return count;
    }

    /** System.nanoTime() of the first poll that returned records; 0 if none yet. */
    long firstNanos() {
        return firstNanos;
    }

    /** The latencies in ms of the records with a timestamp >= {@code fromMs}, sorted. */
    long[] sortedLatencies(long fromMs) {
        long[] out;
        synchronized (lock) {
            out = new long[latencyCount];
            int n = 0;
            for (int i = 0; i < latencyCount; i++) {
                if (timestamps[i] >= fromMs) {
                    out[n++] = latencies[i];
                }
            }
            out = Arrays.copyOf(out, n);
        }
        Arrays.sort(out);
        return out;
    }

    /** The {@code q}-quantile (0..1) of sorted values, nearest rank. */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        thread.join(10_000);
    }

    /**
     * Reads the whole committed output of a counting job and checks it is exactly once: {@code
     * total} records, and each key's largest count equals its number of input records.
     *
     * @return null if correct, else what is wrong
     */
    static @Nullable String verify(String bootstrap, String topic, int partitions, int[] expected, long total,
            Duration timeout) {
        Properties p = consumerProps(bootstrap);
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        long[] maxCount = new long[expected.length];
        long seen = 0;
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = partitions(topic, partitions);
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(tps)); // the LSO under read_committed
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    seen++;
                    int key = Integer.parseInt(new String(r.key(), StandardCharsets.UTF_8).substring(1));
                    long c = countOf(r.value());
                    if (c > maxCount[key]) {
                        maxCount[key] = c;
                    }
                }
                boolean atEnd = true;
                for (TopicPartition tp : tps) {
                    atEnd &= consumer.position(tp) >= end.get(tp);
                }
                if (atEnd) {
                    break;
                }
            }
        }
        if (seen != total) {
            return "expected " + total + " output records but read " + seen;
        }
        int wrong = 0;
        String example = null;
        for (int k = 0; k < expected.length; k++) {
            if (maxCount[k] != expected[k]) {
                wrong++;
                if (example == null) {
                    example = "k" + k + " counted " + maxCount[k] + " but occurs " + expected[k] + " times";
                }
            }
        }
        return wrong == 0 ? null : wrong + " keys have wrong counts, e.g. " + example;
    }

    /** The number after {@code "count":} in a JSON object. */
    static long countOf(byte[] json) {
        String s = new String(json, StandardCharsets.UTF_8);
        int i = s.indexOf("\"count\":");
        if (i < 0) {
            throw new IllegalArgumentException("no count in output value " + s);
        }
        i += 8;
        while (s.charAt(i) == ' ') {
            i++;
        }
        long v = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            v = v * 10 + (s.charAt(i++) - '0');
        }
        return v;
    }
}
