package io.flowkafka.internal.processor;

import io.flowkafka.avro.BatchedInput;
import io.flowkafka.internal.dlq.FlowProcessingException;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.FlowMessage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * SwiftMap batching ({@code allow_batching_with_relaxed_guarantees}) of one task: inputs wait in a changelogged
 * buffer ({@link BatchBuffer}) and are cut into one call when the batch is full ({@code max_batch_size}), when the
 * first waited {@code max_batch_delay}, or when the inputs completed. If a batch's call fails, each message runs
 * again as a batch of one, so only the messages that fail on their own go to the dead-letter topic, as without
 * batching. The buffer is restored from its store at init (DESIGN rule 1). Not thread-safe.
 */
final class SwiftMapBatching {
    /** What a cut batch does: run as one call, or go to the dead-letter topic. */
    interface Calls {
        /** Runs one batched call with all-or-nothing effects. */
        void run(List<FlowMessage> messages);

        /** Sends a buffered input whose call failed (or that could not be decoded) to the dead-letter topic. */
        void deadLetter(BatchBuffer.Entry entry, FlowProcessingException failure);
    }

    static final int CUT_SIZE = 0;
    static final int CUT_DELAY = 1;
    static final int CUT_COMPLETION = 2;

    private final String computation;
    private final BatchBuffer buffer;
    private final int maxSize;
    private final long maxDelayMs;
    private final boolean deadLetters;
    private final Calls calls;
    private final MeterRegistry meters;
    private final DistributionSummary sizes;
    private final Counter[] cuts;

    SwiftMapBatching(String computation, BatchBuffer buffer, int maxSize, long maxDelayMs, boolean deadLetters,
            Calls calls, MeterRegistry meters, Tags tags) {
        this.computation = computation;
        this.buffer = buffer;
        this.maxSize = maxSize;
        this.maxDelayMs = maxDelayMs;
        this.deadLetters = deadLetters;
        this.calls = calls;
        this.meters = meters;
        this.sizes = DistributionSummary.builder("flow.batching.batch_size")
                .description("Input messages per batch of a SwiftMap with allow_batching_with_relaxed_guarantees")
                .tags(tags).register(meters);
        String[] rules = {"size", "delay", "completion"};
        this.cuts = new Counter[rules.length];
        for (int i = 0; i < rules.length; i++) {
            cuts[i] = Counter.builder("flow.batching.batches")
                    .description("Batches cut, by rule: size (max_batch_size, reproduced by a replay of one input "
                            + "stream), delay (max_batch_delay, timing-dependent), completion (inputs completed)")
                    .tags(tags).tag("cut", rules[i]).register(meters);
        }
    }

    /** How often the delay rule is checked. */
    long checkIntervalMs() {
        return Math.max(1, Math.min(maxDelayMs, 1000) / 2);
    }

    /** Buffers a decoded input (and its record, for dead letters); cuts the batch when it is full. */
    void add(Record<byte[], byte[]> record, RecordMetadata md, FlowMessage message, long nowMs) {
        Header meta = record.headers().lastHeader(FlowHeaders.META);
        BatchedInput r = BatchedInput.newBuilder().setTopic(md.topic())
                .setPartition(md.partition()).setOffset(md.offset()).setTimestamp(record.timestamp())
                .setKey(record.key() == null ? null : ByteBuffer.wrap(record.key()))
                .setValue(record.value() == null ? null : ByteBuffer.wrap(record.value()))
                .setMeta(meta == null || meta.value() == null ? null : ByteBuffer.wrap(meta.value()))
                .build();
        buffer.add(message, r, nowMs);
        if (buffer.size() >= maxSize) {
            flush(CUT_SIZE);
        }
    }

    /** Cuts the batch if its first input waited {@code max_batch_delay}; whether it did. */
    boolean cutIfDue(long nowMs) {
        if (!buffer.isEmpty() && nowMs - buffer.firstBufferedWallMs() >= maxDelayMs) {
            flush(CUT_DELAY);
            return true;
        }
        return false;
    }

    /** Cuts the batch because the inputs completed, if anything waits. */
    void cutAtCompletion() {
        if (!buffer.isEmpty()) {
            flush(CUT_COMPLETION);
        }
    }

    /** Whether no input waits. */
    boolean isEmpty() {
        return buffer.isEmpty();
    }

    /** The smallest event timestamp waiting: it holds the task's output watermark. */
    long minEventTimestamp() {
        return buffer.minEventTimestamp();
    }

    /** Cuts the buffered inputs into one batch and runs it (see the class comment for failures). */
    private void flush(int cut) {
        List<BatchBuffer.Entry> entries = buffer.drain();
        sizes.record(entries.size());
        cuts[cut].increment();
        List<FlowMessage> messages = new ArrayList<>(entries.size());
        List<BatchBuffer.Entry> decoded = new ArrayList<>(entries.size());
        for (BatchBuffer.Entry e : entries) {
            if (e.message() == null) {
                calls.deadLetter(e, new FlowProcessingException(computation, "decode the record of topic "
                        + e.record().getTopic(), Objects.requireNonNull(e.decodeError())));
            } else {
                messages.add(e.message());
                decoded.add(e);
            }
        }
        if (messages.isEmpty()) {
            return;
        }
        try {
            calls.run(messages);
        } catch (FlowProcessingException e) {
            if (!deadLetters) {
                throw e;
            }
            if (messages.size() == 1) {
                calls.deadLetter(decoded.get(0), e);
                return;
            }
            for (BatchBuffer.Entry one : decoded) {
                try {
                    calls.run(List.of(Objects.requireNonNull(one.message())));
                } catch (FlowProcessingException alone) {
                    calls.deadLetter(one, alone);
                }
            }
        }
    }

    /** Removes the meters. */
    void close() {
        meters.remove(sizes);
        for (Meter c : cuts) {
            meters.remove(c);
        }
    }
}
