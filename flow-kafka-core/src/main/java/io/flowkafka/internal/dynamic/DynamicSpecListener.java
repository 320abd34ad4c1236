package io.flowkafka.internal.dynamic;

import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.status.StatusBoard;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies every new document of a pipeline's dynamic-spec topic on one instance. It keeps the rule that an instance
 * applies documents in version order, each whole or not at all: a document not newer than the one applied is
 * skipped (the instance's own change, already applied when it was published, comes back this way), and one the
 * instance cannot apply (not a document, or a setting this build does not know) is logged with the reason and
 * reported in {@code FlowRuntime.status()} at {@value #STATUS_PATH}, while the previous settings stay.
 *
 * <p>Bound: the consumer polls at most {@link DynamicSpecTopic#POLL} (500 ms) apart with
 * {@code fetch.max.wait.ms=100}, so a published document reaches every running instance within about a second.
 *
 * <p>Threading: one daemon thread owns the consumer (assigned the topic's single partition, no consumer group);
 * {@link #apply} is also called by the thread that publishes a change, so it is synchronized.
 */
final class DynamicSpecListener implements Runnable {
    /** Where {@code FlowRuntime.status()} reports a document this instance could not apply. */
    static final String STATUS_PATH = "/dynamic_spec/rejected";

    private static final Logger LOG = LoggerFactory.getLogger(DynamicSpecListener.class);

    private final String pipeline;
    private final String topic;
    private final byte[] key;
    private final DynamicSpec dynamic;
    private final StatusBoard status;
    private final Consumer<byte[], byte[]> consumer;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean started;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The newest version seen, applied or rejected. Guarded by {@code this}. */
    private long seenVersion;

    DynamicSpecListener(String pipeline, String topic, DynamicSpec dynamic, StatusBoard status,
            Consumer<byte[], byte[]> consumer) {
        this.pipeline = pipeline;
        this.topic = topic;
        this.key = pipeline.getBytes(StandardCharsets.UTF_8);
        this.dynamic = dynamic;
        this.status = status;
        this.consumer = consumer;
        this.thread = new Thread(this, "flow-dynamic-spec-" + pipeline);
        thread.setDaemon(true);
    }

    /** The listener's consumer, for the start-up read before {@link #start()}. */
    Consumer<byte[], byte[]> consumer() {
        return consumer;
    }

    /** Starts polling from the consumer's current position; call once, after the start-up read. */
    void start() {
        started = true;
        thread.start();
    }

    @Override
    public void run() {
        try {
            while (running) {
                try {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(DynamicSpecTopic.POLL)) {
                        accept(r);
                    }
                } catch (WakeupException | InterruptException e) {
                    // close() asked us to stop; the loop condition ends it
                } catch (KafkaException e) {
                    LOG.warn("pipeline '{}': reading the dynamic-spec topic {} failed, retrying in 1 s: {}", pipeline,
                            topic, e.toString());
                    pause();
                }
            }
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private void pause() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Applies a record of the topic, if it is a newer document of this pipeline; reports one it cannot apply. */
    void accept(ConsumerRecord<byte[], byte[]> r) {
        if (r.key() == null || !Arrays.equals(r.key(), key)) {
            return; // another pipeline's key: not ours to apply
        }
        String where = "the record at offset " + r.offset() + " of " + topic;
        if (r.value() == null) {
            reject(where + " is a tombstone, not a dynamic spec document");
            return;
        }
        DynamicSpecDocument doc;
        try {
            doc = DynamicSpecDocument.fromJson(r.value());
        } catch (IllegalArgumentException e) {
            reject(where + " is not a dynamic spec document: " + e.getMessage());
            return;
        }
        apply(doc, where);
    }

    /** How a user mends a document an instance cannot apply. */
    private static final String FIX = "; fix: publish a corrected document with FlowRuntime.reconfigure (a null value "
            + "removes a setting), or upgrade this instance to the build that wrote it";

    /**
     * Applies a document if it is newer than the one applied: replaces the whole dynamic spec, or reports why not.
     *
     * @param doc the document
     * @param where where it comes from, for the log and the status
     * @return whether this instance now runs with {@code doc} (false if it was older, or could not be applied)
     */
    synchronized boolean apply(DynamicSpecDocument doc, String where) {
        if (doc.version() <= seenVersion) {
            return false;
        }
        seenVersion = doc.version();
        try {
            dynamic.replace(doc.spec());
        } catch (IllegalArgumentException e) {
            if (!started) {
                // starting: the static settings would drop the document's pause, stop, drains, skip expressions and
                // limits; apply what this instance's spec can, report the rest
                List<String> left = dynamic.replaceWhatApplies(doc.spec());
                String message = "dynamic spec version " + doc.version() + " (" + where + ") applied except what this "
                        + "instance cannot apply: " + String.join("; ", left) + FIX;
                LOG.warn("pipeline '{}': {}", pipeline, message);
                status.report("*", -1, STATUS_PATH, message, Instant.now());
                return true;
            }
            reject("dynamic spec version " + doc.version() + " (" + where + ") cannot be applied by this instance: "
                    + e.getMessage() + FIX);
            return false;
        } catch (RuntimeException e) { // a bug
            reject("dynamic spec version " + doc.version() + " (" + where + ") cannot be applied by this instance: "
                    + e + FIX);
            return false;
        }
        status.clear("*", -1, STATUS_PATH);
        LOG.info("pipeline '{}': dynamic spec version {} applied ({}): {}", pipeline, doc.version(), where, doc.spec());
        return true;
    }

    private void reject(String message) {
        LOG.warn("pipeline '{}': {}; the previous dynamic settings stay", pipeline, message);
        status.report("*", -1, STATUS_PATH, message + "; the previous dynamic settings stay", Instant.now());
    }

    /** Stops the thread (at most ~5 s) and closes the consumer. Idempotent. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        running = false;
        if (!started) {
            started = true; // closed now; never polled
            consumer.close(Duration.ofSeconds(5));
            return;
        }
        consumer.wakeup();
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(Duration.ofSeconds(10).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
