package io.flowkafka.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Reads an enrich job's output with {@code read_committed} from the beginning while the job runs and
 * checks every output: one per event id ({@code 0..events-1}), its key's reference row joined in
 * ({@code name} and {@code score} as {@link EnrichJobs#referenceRow} gives them), keyed by the event's
 * key. Notes the wall-clock time of the first output, of the moments a tenth, two tenths, ... of the
 * events had theirs, and of the moment every event had its output.
 *
 * <p>One reader thread; the accessors are for the thread that created it.
 */
final class EnrichMeter implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final long events;
    private final BitSet seen;
    private final CountDownLatch complete = new CountDownLatch(1);
    private final Thread thread;
    private final long[] tenthAtMs = new long[11];
    private volatile boolean stop;
    private volatile long firstAtMs = -1;
    private volatile long completeAtMs = -1;
    private volatile long total;
    private volatile long distinct;
    private long duplicates;
    private long notEnriched;
    private long wrong;
    private long unreadable;
    private @Nullable String example;
    private volatile @Nullable Throwable failure;

    EnrichMeter(String bootstrap, String topic, int partitions, long events) {
        this.events = events;
        this.seen = new BitSet((int) events);
        Properties p = OutputMeter.consumerProps(bootstrap);
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        consumer = new KafkaConsumer<>(p);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        tps.forEach(consumer::position); // positioned before the job starts
        thread = new Thread(this::run, "enrich-meter-" + topic);
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
                    if (check(r.key(), r.value())) {
                        d++;
                    }
                }
                for (int k = 1; k <= 10; k++) {
                    if (tenthAtMs[k] == 0 && d * 10 >= events * k) {
                        tenthAtMs[k] = now;
                    }
                }
                total = t;
                distinct = d;
                if (d == events && completeAtMs < 0) {
                    completeAtMs = now;
                    complete.countDown();
                }
            }
        } catch (Throwable e) {
            failure = e;
            complete.countDown();
        }
    }

    /** Checks one output; true if it is the first of its event id. */
    private boolean check(byte @Nullable [] key, byte @Nullable [] value) {
        int k = keyNumber(key);
        long id = value == null ? -1 : longField(value, ID);
        if (k < 0 || id < 0 || id >= events) {
            unreadable++;
            note("unreadable output " + (value == null ? "null" : new String(value, StandardCharsets.UTF_8)));
            return false;
        }
        if (seen.get((int) id)) {
            duplicates++;
            return false;
        }
        seen.set((int) id);
        String name = stringField(value, NAME);
        if (name == null) {
            notEnriched++;
            note("event " + id + " of key k" + k + " not enriched");
        } else if (!name.equals(EnrichJobs.expectedName(k)) || longField(value, SCORE) != EnrichJobs.expectedScore(k)) {
            wrong++;
            note("event " + id + " of key k" + k + " enriched wrongly: " + new String(value, StandardCharsets.UTF_8));
        }
        return true;
    }

    private void note(String s) {
        if (example == null) {
            example = s;
        }
    }

    private static final byte[] ID = "\"id\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NAME = "\"name\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SCORE = "\"score\"".getBytes(StandardCharsets.UTF_8);

    /** {@code N} of a key {@code kN}, or -1. */
    static int keyNumber(byte @Nullable [] key) {
        if (key == null || key.length < 2 || key[0] != 'k') {
            return -1;
        }
        long n = 0;
        for (int i = 1; i < key.length; i++) {
            int c = key[i] - '0';
            if (c < 0 || c > 9 || n > Integer.MAX_VALUE) {
                return -1;
            }
            n = n * 10 + c;
        }
        return n > Integer.MAX_VALUE ? -1 : (int) n;
    }

    /** A non-negative integer field of a JSON object, or -1 (absent, null, not a number). */
    static long longField(byte[] json, byte[] field) {
        int i = valueAt(json, field);
        if (i < 0 || i >= json.length || json[i] < '0' || json[i] > '9') {
            return -1;
        }
        long v = 0;
        while (i < json.length && json[i] >= '0' && json[i] <= '9') {
            v = v * 10 + (json[i++] - '0');
        }
        return v;
    }

    /** A string field (without escapes) of a JSON object, or null (absent, null). */
    static @Nullable String stringField(byte[] json, byte[] field) {
        int i = valueAt(json, field);
        if (i < 0 || i >= json.length || json[i] != '"') {
            return null;
        }
        int end = i + 1;
        while (end < json.length && json[end] != '"') {
            end++;
        }
        return new String(json, i + 1, end - i - 1, StandardCharsets.UTF_8);
    }

    /** The index of the value of {@code field} (a quoted name), or -1. */
    private static int valueAt(byte[] json, byte[] field) {
        int at = indexOf(json, field);
        if (at < 0) {
            return -1;
        }
        int i = at + field.length;
        while (i < json.length && (json[i] == ' ' || json[i] == ':')) {
            i++;
        }
        return i;
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

    /** Waits up to {@code ms} for every event's output; false on timeout. */
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

    /** Wall-clock ms at which {@code k} tenths of the events had their output, or -1. */
    long tenthAtMs(int k) {
        return tenthAtMs[k] == 0 ? -1 : tenthAtMs[k];
    }

    /** Stops reading (after the caller let it read a little longer for late duplicates) and summarizes. */
    Check finish() throws InterruptedException {
        stop = true;
        thread.join(10_000);
        consumer.close(Duration.ofSeconds(5));
        return new Check(events, total, distinct, duplicates, notEnriched, wrong, unreadable, example, failure);
    }

    @Override
    public void close() {
        stop = true;
    }

    /** What the output topic held. */
    record Check(long events, long outputs, long distinct, long duplicates, long notEnriched, long wrong,
            long unreadable, @Nullable String example, @Nullable Throwable failure) {
        boolean ok() {
            return failure == null && outputs == events && distinct == events && duplicates == 0 && notEnriched == 0
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
            if (distinct < events) {
                p.add(String.format("%,d of %,d events have no output", events - distinct, events));
            }
            if (duplicates > 0) {
                p.add(String.format("%,d duplicate outputs", duplicates));
            }
            if (notEnriched > 0) {
                p.add(String.format("%,d events not enriched", notEnriched));
            }
            if (wrong > 0) {
                p.add(String.format("%,d events enriched with a wrong row", wrong));
            }
            if (unreadable > 0) {
                p.add(String.format("%,d unreadable outputs", unreadable));
            }
            if (example != null) {
                p.add("e.g. " + example);
            }
            return String.join("; ", p);
        }

        @Override
        public String toString() {
            return String.format("%,d outputs for %,d events: %s", outputs, events, problem());
        }
    }
}
