package io.flowkafka.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The counting workload: {@code keys} string keys {@code k0..k<keys-1>}, drawn uniformly (the
 * anchor workload) or Zipfian, each record's value a JSON object of exactly {@code valueBytes}
 * bytes that contains its key: {@code {"key":"k123","pad":"xxxx..."}}.
 *
 * <p>The record key is the counting key as a UTF-8 string, so the default partitioner puts all
 * records of a key on one of the input topic's partitions.
 *
 * <p>Not thread-safe; {@link #produceBacklog} and {@link Paced} each use their own producer.
 */
final class Workload {
    private final int keys;
    private final byte[][] keyBytes;
    private final byte[][] values;
    private final double @org.jspecify.annotations.Nullable [] zipfCdf;
    private final long seed;

    Workload(int keys, int valueBytes, boolean zipf, long seed) {
        this.keys = keys;
        this.seed = seed;
        this.keyBytes = new byte[keys][];
        this.values = new byte[keys][];
        for (int i = 0; i < keys; i++) {
            String key = "k" + i;
            keyBytes[i] = key.getBytes(StandardCharsets.UTF_8);
            String head = "{\"key\":\"" + key + "\",\"pad\":\"";
            String tail = "\"}";
            int pad = valueBytes - head.length() - tail.length();
            if (pad < 0) {
                throw new IllegalArgumentException("--value-bytes " + valueBytes + " is too small for key " + key);
            }
            values[i] = (head + "x".repeat(pad) + tail).getBytes(StandardCharsets.UTF_8);
        }
        this.zipfCdf = zipf ? zipfCdf(keys, 0.99) : null;
    }

    /** Exponent-{@code s} Zipf over ranks 1..n as a cumulative distribution (rank r = key r-1). */
    private static double[] zipfCdf(int n, double s) {
        double[] cdf = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += 1.0 / Math.pow(i + 1, s);
            cdf[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cdf[i] /= sum;
        }
        return cdf;
    }

    int keys() {
        return keys;
    }

    /** The key indexes of {@code records} records, deterministic for the seed. */
    int[] draw(int records) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] out = new int[records];
        for (int i = 0; i < records; i++) {
            out[i] = next(random);
        }
        return out;
    }

    private int next(SplittableRandom random) {
        if (zipfCdf == null) {
            return random.nextInt(keys);
        }
        int i = Arrays.binarySearch(zipfCdf, random.nextDouble());
        return Math.min(i < 0 ? -i - 1 : i, keys - 1);
    }

    /** How many times each key occurs in {@code sequence}. */
    int[] expectedCounts(int[] sequence) {
        int[] counts = new int[keys];
        for (int k : sequence) {
            counts[k]++;
        }
        return counts;
    }

    static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return p;
    }

    /** Writes the whole sequence to {@code topic} as fast as the broker takes it; returns the elapsed nanos. */
    long produceBacklog(String bootstrap, String topic, int[] sequence) {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(128 * 1024));
        // One request in flight: on a just-created topic the first batch of a partition can be refused
        // (NOT_LEADER_OR_FOLLOWER) while a later one is taken, and its retry then fails with
        // OutOfOrderSequenceException; seen here under load.
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        AtomicReference<Exception> failure = new AtomicReference<>();
        long start = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int k : sequence) {
                producer.send(new ProducerRecord<>(topic, keyBytes[k], values[k]), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("producing the backlog to " + topic + " failed", failure.get());
        }
        return System.nanoTime() - start;
    }

    /**
     * A producer thread paced at {@code rate} records/s: {@code warmupSeconds} of warm-up, then
     * {@code measureSeconds} whose records are measured. Each record's timestamp is its send time
     * (wall clock, ms); records from {@link #measureFromMs()} on are the measured ones.
     */
    final class Paced implements AutoCloseable {
        private final Thread thread;
        private final AtomicLong measured = new AtomicLong();
        private final AtomicLong sent = new AtomicLong();
        private volatile long measureFromMs = Long.MAX_VALUE;
        private volatile boolean done;
        private volatile boolean stop;
        private volatile long maxLagNanos;
        private volatile @org.jspecify.annotations.Nullable Throwable failure;

        Paced(String bootstrap, String topic, int rate, int warmupSeconds, int measureSeconds) {
            Properties p = producerProps(bootstrap);
            thread = new Thread(() -> run(p, topic, rate, warmupSeconds, measureSeconds), "bench-paced-producer");
            thread.setDaemon(true);
        }

        Paced start() {
            thread.start();
            return this;
        }

        private void run(Properties props, String topic, int rate, int warmupSeconds, int measureSeconds) {
            SplittableRandom random = new SplittableRandom(seed + 1);
            long total = (long) rate * (warmupSeconds + measureSeconds);
            long warmup = (long) rate * warmupSeconds;
            double intervalNanos = 1e9 / rate;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
                long start = System.nanoTime();
                long lastWarmupTs = Long.MIN_VALUE;
                for (long i = 0; i < total && !stop; i++) {
                    long due = start + (long) (i * intervalNanos);
                    long now = System.nanoTime();
                    if (due > now + 200_000) {
                        LockSupport.parkNanos(due - now); // sleep in ~ms ticks; sends in between go in bursts
                        now = System.nanoTime();
                    }
                    if (now - due > maxLagNanos) {
                        maxLagNanos = now - due;
                    }
                    long ts = System.currentTimeMillis();
                    if (i == warmup) {
                        while (ts <= lastWarmupTs) { // measured records have timestamps > every warm-up record's
                            Thread.onSpinWait();
                            ts = System.currentTimeMillis();
                        }
                        measureFromMs = ts;
                    } else if (i < warmup) {
                        lastWarmupTs = ts;
                    }
                    if (i >= warmup) {
                        measured.incrementAndGet();
                    }
                    int k = next(random);
                    producer.send(new ProducerRecord<>(topic, null, ts, keyBytes[k], values[k]), (md, e) -> {
                        if (e != null && failure == null) {
                            failure = e;
                        }
                    });
                    sent.incrementAndGet();
                }
                producer.flush();
            } catch (Throwable t) {
                failure = t;
            } finally {
                done = true;
            }
        }

        /** Wall-clock ms from which records are measured; Long.MAX_VALUE during warm-up. */
        long measureFromMs() {
            return measureFromMs;
        }

        /** Records sent so far. */
        long sent() {
            return sent.get();
        }

        /** Measured records sent so far. */
        long measuredSent() {
            return measured.get();
        }

        boolean isDone() {
            return done;
        }

        /** How far behind its schedule the producer fell at worst, in ms (pacing quality). */
        long maxLagMs() {
            return TimeUnit.NANOSECONDS.toMillis(maxLagNanos);
        }

        @org.jspecify.annotations.Nullable Throwable failure() {
            return failure;
        }

        void await() throws InterruptedException {
            thread.join();
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join(30_000);
        }
    }
}
