package io.flowkafka.connectors.http;

import io.flowkafka.api.MessageId;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a {@code TAsyncHttpSink}'s outbox as HTTP requests, at least once.
 *
 * <h2>Model</h2>
 * A batch (one outbox partition, log order) is split into lanes, one per key ({@code key_column}; a message without a
 * key is a lane of its own). Up to {@code concurrency} lanes run at once on the sink's request threads; a lane sends
 * its messages one after the other ({@link MessagePost}), so two requests of one key are never in flight together and
 * a key's messages reach the target in log order. {@link #deliver} returns once every message was delivered (2xx) or
 * dead-lettered (a 4xx that is the request's fault); the service then commits the batch.
 *
 * <h2>Blocking</h2>
 * When a message's retries are used up, its lane stops (later messages of its key wait), the other lanes stop before
 * their next attempt, and {@link #deliver} throws a retryable {@link OutboxDeliveryException} naming the sink, the
 * response and what to do: the outbox service shows it as the sink's status error and offers the same batch again
 * with its backoff, for as long as the target fails; the sink resumes by itself when the target recovers (Flow's
 * "retry exhaustion blocks the sink"). Messages of the batch already delivered are remembered and not sent again
 * when it is offered again; after a crash or a rebalance they are (at least once), with the same key and body.
 *
 * <p>A call sends for at most {@link #BATCH_TIME} ({@code max.poll.interval.ms} is 5 minutes by default): a batch
 * that takes longer (a slow target, one busy key) is cut short after the requests in flight, and the call throws
 * {@link OutboxDeliveryException#unfinished}: the service polls, offers the batch again at once and the deliverer
 * goes on where it stopped.
 *
 * <p>Threading: {@link #open}, {@link #deliver}, {@link #release} and {@link #close} on the delivery service's
 * thread; requests on the sink's own pool of {@code concurrency} daemon threads.
 */
final class HttpDeliverer implements OutboxDeliverer {
    private static final Logger LOG = LoggerFactory.getLogger(HttpDeliverer.class);
    /** The longest a call of {@link #deliver} starts requests for, so the delivery service polls in time. */
    static final Duration BATCH_TIME = Duration.ofMinutes(1);
    private final Duration batchTime;
    private final SinkContext context;
    private final HttpSinkParameters params;
    private final HttpSinkMeters meters;
    private final HttpDeadLetters deadLetters;
    private final HttpClient client;
    private final ExecutorService pool;
    private final String sinkName;
    /** Per open partition, the offsets of the current batch already delivered or dead-lettered. */
    private final Map<Integer, Set<Long>> done = new ConcurrentHashMap<>();
    /** Per open partition, the earliest next attempt a {@code Retry-After} asked for. */
    private final Map<Integer, Long> notBefore = new ConcurrentHashMap<>();
    /** Per outbox partition, the attempts made of the messages a call stopped before they ended. */
    private final Map<Integer, Map<MessageId, Integer>> attempts = new ConcurrentHashMap<>();
    private @Nullable MessagePost post;

    HttpDeliverer(SinkContext context, HttpSinkParameters params) {
        this(context, params, BATCH_TIME);
    }

    /** With another {@link #BATCH_TIME} (tests). */
    HttpDeliverer(SinkContext context, HttpSinkParameters params, Duration batchTime) {
        this.batchTime = batchTime;
        this.context = context;
        this.params = params;
        this.sinkName = "sink '" + context.sink().id() + "' (TAsyncHttpSink " + params.method() + " " + params.url()
                + ")";
        this.meters = new HttpSinkMeters(context.meters(), context.pipeline(), context.sink().id());
        this.deadLetters = new HttpDeadLetters(context);
        this.client = HttpClient.newBuilder().connectTimeout(params.requestTimeout())
                .followRedirects(HttpClient.Redirect.NEVER).version(HttpClient.Version.HTTP_1_1).build();
        AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(params.concurrency(), r -> {
            Thread t = new Thread(r, "flow-" + context.pipeline() + "-http-" + context.sink().id() + "-"
                    + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException {
        try {
            // secrets are read again at each open: a rotated file or variable is picked up by the next rebalance
            post = new MessagePost(client, params, SecretValues.read(params.secretHeaders()), meters, deadLetters,
                    sinkName);
        } catch (IllegalStateException e) {
            throw OutboxDeliveryException.retryable(sinkName + " cannot read a secret header: " + e.getMessage()
                    + "; set it where the runtime runs");
        }
        done.put(partition, ConcurrentHashMap.newKeySet());
        return OptionalLong.empty();
    }

    @Override
    public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
        int p = batch.partition();
        MessagePost sender = post;
        if (sender == null) {
            throw OutboxDeliveryException.retryable(sinkName + ": partition " + p + " is not open");
        }
        long wait = notBefore.getOrDefault(p, 0L);
        if (System.currentTimeMillis() < wait) {
            throw OutboxDeliveryException.retryable(sinkName + " is blocked on outbox partition " + p + ": the target "
                    + "asked not to retry before " + Instant.ofEpochMilli(wait) + " (Retry-After); it resumes then");
        }
        Set<Long> delivered = done.computeIfAbsent(p, k -> ConcurrentHashMap.newKeySet());
        // kept across opens (a rebalance, a reopen after a failed commit): at most one entry per lane in flight
        Map<MessageId, Integer> partitionAttempts = attempts.computeIfAbsent(p, k -> new ConcurrentHashMap<>());
        Map<Object, List<OutboxRecord>> lanes = new LinkedHashMap<>();
        for (OutboxRecord r : batch.records()) {
            if (!delivered.contains(r.offset())) {
                Object key = r.key() == null ? (Object) r.offset() : ByteBuffer.wrap(r.key());
                lanes.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
            }
        }
        AtomicReference<@Nullable String> blocked = new AtomicReference<>();
        AtomicLong retryAfter = new AtomicLong();
        long deadline = System.nanoTime() + batchTime.toNanos();
        BooleanSupplier stop = () -> blocked.get() != null || System.nanoTime() - deadline > 0;
        List<Future<?>> running = new ArrayList<>(lanes.size());
        for (List<OutboxRecord> lane : lanes.values()) {
            running.add(pool.submit(() -> {
                for (OutboxRecord r : lane) {
                    MessagePost.Result result = sender.send(r, stop, partitionAttempts);
                    switch (result.outcome()) {
                        case DELIVERED, DEAD_LETTERED -> delivered.add(r.offset());
                        case STOPPED -> {
                            return null;
                        }
                        case BLOCKED -> {
                            blocked.compareAndSet(null, blockedMessage(p, r, result.problem()));
                            retryAfter.accumulateAndGet(result.notBeforeMs(), Math::max);
                            return null;
                        }
                    }
                }
                return null;
            }));
        }
        try {
            for (Future<?> f : running) {
                f.get();
            }
        } catch (InterruptedException e) {
            running.forEach(f -> f.cancel(true));
            Thread.currentThread().interrupt();
            throw OutboxDeliveryException.retryable(sinkName + ": interrupted while delivering");
        } catch (ExecutionException e) {
            blocked.compareAndSet(null, sinkName + " failed on outbox partition " + p + ": "
                    + sender.redact(String.valueOf(e.getCause())));
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (InterruptedException | ExecutionException ignored) {
                    // the first failure is reported
                }
            }
        }
        String problem = blocked.get();
        if (problem != null) {
            if (retryAfter.get() > 0) {
                notBefore.put(p, retryAfter.get());
            }
            meters.blocked(p, true);
            LOG.warn(problem);
            throw OutboxDeliveryException.retryable(problem);
        }
        int left = 0;
        for (OutboxRecord r : batch.records()) {
            left += delivered.contains(r.offset()) ? 0 : 1;
        }
        if (left > 0) { // out of time: the delivered ones are remembered, the next call sends the rest
            throw OutboxDeliveryException.unfinished(sinkName + ": " + left + " of the " + batch.records().size()
                    + " messages of the batch at outbox offset " + batch.firstOffset() + " on outbox partition " + p
                    + " are still to send after " + batchTime.toSeconds() + " s; they follow (a slow target)");
        }
        delivered.clear();
        notBefore.remove(p);
        meters.blocked(p, false);
    }

    private String blockedMessage(int partition, OutboxRecord r, String problem) {
        return sinkName + " is blocked on outbox partition " + partition + ": message " + r.messageId() + " (outbox "
                + "offset " + r.offset() + ") failed: " + problem + ". Nothing is skipped: the sink sends it again with "
                + "the same " + params.idempotencyKeyHeader() + " (later messages of its key wait) until the target "
                + "takes it. Fix the target at " + params.url() + " or the sink's url, headers or secret_headers; if "
                + "the target rejects this message for good, make it answer one of dead_letter_statuses "
                + params.deadLetterStatuses() + " so it goes to the dead-letter topic " + context.deadLetterTopic();
    }

    @Override
    public void release(int partition) {
        done.remove(partition);
        notBefore.remove(partition);
        meters.blocked(partition, false);
    }

    @Override
    public void close() {
        pool.shutdownNow();
        deadLetters.close();
    }
}
