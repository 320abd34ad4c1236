package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flowkafka.api.MessageId;
import io.flowkafka.connectors.http.LoopbackHttpServer.Answer;
import io.flowkafka.connectors.http.LoopbackHttpServer.Received;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP sink's deliverer against a real HTTP server on loopback, with injected 5xx, 429 + Retry-After, slow answers
 * past the request timeout and connections closed without an answer. Reference 002, HTTP: "Asynchronous sink
 * (TAsyncHttpSink): at-least-once — POST requests run outside the epoch transaction, so the receiver must make the
 * operation idempotent or deduplicate the stable message ID sent in Idempotency-Key by default."
 */
@Timeout(60)
class HttpDelivererTest {
    private LoopbackHttpServer server;
    private SimpleMeterRegistry meters;
    private final List<OutboxDeliverer> deliverers = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        server = new LoopbackHttpServer();
        meters = new SimpleMeterRegistry();
    }

    @AfterEach
    void stop() {
        deliverers.forEach(OutboxDeliverer::close);
        server.close();
    }

    @Test
    void shouldPostEachMessageWithItsIdAsIdempotencyKeyAndTheSpecHeaders() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cr3t-token-value\n");
        OutboxDeliverer d = deliverer(Map.of("headers", Map.of("X-Source", "flow"),
                "secret_headers", Map.of("Authorization", Map.of("file", token.toString()))));
        d.open(0, OptionalLong.empty());
        OutboxBatch batch = batch(0, 0, List.of("k1", "k2", "k3"));
        d.deliver(batch);
        List<Received> got = server.received();
        assertThat(got).extracting(Received::key).containsExactlyInAnyOrderElementsOf(ids(batch));
        for (Received r : got) {
            assertThat(r.bodyText()).isEqualTo(bodyOf(batch, r.key()));
            assertThat(r.header("Content-type")).isEqualTo("application/json");
            assertThat(r.header("X-source")).isEqualTo("flow");
            assertThat(r.header("Authorization")).as("the secret read from the file, line break removed")
                    .isEqualTo("s3cr3t-token-value");
        }
        assertThat(count("flow.sink.http.requests", "outcome", "2xx")).isEqualTo(3);
    }

    @Test
    void shouldRetry5xxTimeoutsAndResetsWithTheSameKeyAndBodyAndLoseNothing() throws Exception {
        // the timeout is far from both a normal answer and the slow one: a GC pause must not make an extra timeout
        OutboxDeliverer d = deliverer(Map.of("request_timeout", "2s", "max_retries", 6, "retry_backoff", "5ms"));
        // per message: 503, then the connection closed without an answer, then an answer slower than the timeout,
        // then 500, then 200
        server.plan(r -> switch (r.attempt()) {
            case 1 -> Answer.status(503, "unavailable");
            case 2 -> Answer.closeWithoutAnswer();
            case 3 -> Answer.slow(3_000);
            case 4 -> Answer.status(500, "oops");
            default -> Answer.ok();
        });
        d.open(0, OptionalLong.empty());
        OutboxBatch batch = batch(0, 0, List.of("a", "b", "c", "d", "e", "f"));
        d.deliver(batch);
        Map<String, List<Received>> byKey = server.received().stream()
                .collect(Collectors.groupingBy(Received::key, LinkedHashMap::new, Collectors.toList()));
        assertThat(byKey.keySet()).containsExactlyInAnyOrderElementsOf(ids(batch));
        byKey.forEach((key, attempts) -> {
            assertThat(attempts).as("attempts of " + key).hasSize(5);
            assertThat(attempts).extracting(Received::bodyText).as("every repeat carries the same body")
                    .containsOnly(bodyOf(batch, key));
        });
        assertThat(server.deliveredKeys()).containsExactlyInAnyOrderElementsOf(ids(batch));
        assertThat(count("flow.sink.http.retries", null, null)).isEqualTo(6 * 4);
        assertThat(count("flow.sink.http.requests", "outcome", "5xx")).isEqualTo(12);
        assertThat(count("flow.sink.http.requests", "outcome", "timeout")).isEqualTo(6);
        assertThat(count("flow.sink.http.requests", "outcome", "io_error")).isEqualTo(6);
    }

    @Test
    void shouldTimeOutARequestWhoseBodyStallsPastTheRequestTimeoutAndRetryIt() throws Exception {
        // request_timeout bounds the whole request: headers that arrive on time do not make a stalled body wait
        OutboxDeliverer d = deliverer(Map.of("request_timeout", "2s", "retry_backoff", "5ms"));
        server.plan(r -> r.attempt() == 1 ? Answer.stalledBody(20_000) : Answer.ok());
        d.open(0, OptionalLong.empty());
        OutboxBatch batch = batch(0, 0, List.of("k"));
        d.deliver(batch);
        assertThat(server.received()).extracting(Received::attempt).as("the stalled answer timed out and was retried")
                .containsExactly(1, 2);
        assertThat(server.deliveredKeys()).containsExactly(ids(batch).get(0));
        assertThat(count("flow.sink.http.requests", "outcome", "timeout")).isEqualTo(1);
    }

    @Test
    void shouldRetryAConnectionResetByThePeerWithTheSameKeyAndBody() throws Exception {
        try (ResettingHttpServer resetting = new ResettingHttpServer(2)) {
            OutboxDeliverer d = deliverer(Map.of("url", resetting.uri().toString(), "retry_backoff", "5ms"));
            d.open(0, OptionalLong.empty());
            OutboxBatch batch = batch(0, 0, List.of("k"));
            d.deliver(batch);
            assertThat(resetting.answered()).as("two connections reset (RST), then answered").containsExactly(false,
                    false, true);
            assertThat(resetting.keys()).containsOnly(ids(batch).get(0)).hasSize(3);
            assertThat(resetting.bodies()).containsOnly(bodyOf(batch, ids(batch).get(0)));
            assertThat(count("flow.sink.http.requests", "outcome", "io_error")).isEqualTo(2);
        }
    }

    @Test
    void shouldHonourRetryAfterOn429() throws Exception {
        OutboxDeliverer d = deliverer(Map.of("retry_backoff", "10ms", "max_retry_backoff", "2s"));
        server.plan(r -> r.attempt() == 1 ? Answer.retryAfter(429, "1") : Answer.ok());
        d.open(0, OptionalLong.empty());
        d.deliver(batch(0, 0, List.of("only")));
        List<Received> got = server.received();
        assertThat(got).hasSize(2);
        assertThat(Duration.ofNanos(got.get(1).arrivedNanos() - got.get(0).arrivedNanos()))
                .as("the retry waited for Retry-After: 1, not the 10 ms backoff").isGreaterThanOrEqualTo(
                        Duration.ofMillis(950));
    }

    /** A Retry-After on the last attempt still holds: "no request is sent before that time" (http-sink.md). */
    @Test
    void shouldHonourRetryAfterOnTheLastAttemptToo() throws Exception {
        OutboxDeliverer d = deliverer(Map.of("max_retries", 0, "retry_backoff", "5ms", "max_retry_backoff", "1s"));
        server.plan(r -> Answer.retryAfter(503, "3600"));
        d.open(0, OptionalLong.empty());
        OutboxBatch batch = batch(0, 0, List.of("k"));
        assertThatThrownBy(() -> d.deliver(batch)).isInstanceOfSatisfying(OutboxDeliveryException.class,
                e -> assertThat(e.getMessage()).contains("after 1 attempts", "Retry-After 3600 s"));
        assertThatThrownBy(() -> d.deliver(batch)).isInstanceOfSatisfying(OutboxDeliveryException.class,
                e -> assertThat(e.getMessage()).contains("asked not to retry before", "(Retry-After)"));
        assertThat(server.received()).as("the service's next offer sent nothing before the Retry-After").hasSize(1);
    }

    @Test
    void shouldBlockWithAStatusErrorAfterTheRetriesAndResumeWhenTheTargetRecovers() throws Exception {
        OutboxDeliverer d = deliverer(Map.of("concurrency", 1, "max_retries", 2, "retry_backoff", "5ms"));
        OutboxBatch batch = batch(0, 0, List.of("k1", "k2", "k3", "k4", "k5"));
        String third = ids(batch).get(2);
        server.plan(r -> r.key().equals(third) ? Answer.status(503, "db down") : Answer.ok());
        d.open(0, OptionalLong.empty());
        assertThatThrownBy(() -> d.deliver(batch)).isInstanceOfSatisfying(OutboxDeliveryException.class, e -> {
            assertThat(e.fatal()).as("retried by the outbox service until the target recovers").isFalse();
            assertThat(e.getMessage()).contains("sink 'web'", "is blocked", "message " + third, "HTTP 503",
                    "\"db down\"", "after 3 attempts", "same Idempotency-Key", "Fix the target at " + server.uri(),
                    "dead_letter_statuses");
        });
        assertThat(gauge("flow.sink.http.blocked")).isEqualTo(1.0);
        assertThat(server.received()).extracting(Received::key).as("k4, k5 wait behind the block")
                .doesNotContain(ids(batch).get(3), ids(batch).get(4));
        server.plan(r -> Answer.ok()); // the target recovers; the service offers the same batch again
        d.deliver(batch);
        assertThat(gauge("flow.sink.http.blocked")).isEqualTo(0.0);
        Map<String, Long> times = server.deliveredKeys().stream()
                .collect(Collectors.groupingBy(k -> k, Collectors.counting()));
        assertThat(times.keySet()).containsExactlyInAnyOrderElementsOf(ids(batch));
        assertThat(times).as("what was delivered before the block is not sent again").allSatisfy(
                (k, n) -> assertThat(n).isEqualTo(1));
    }

    @Test
    void shouldKeepEachKeysOrderAndNeverSendTwoRequestsOfAKeyAtOnce() throws Exception {
        int concurrency = 8;
        OutboxDeliverer d = deliverer(Map.of("concurrency", concurrency));
        // uneven service times, injected by the server: each request's time in flight is [arrived, answered]
        server.plan(r -> Answer.slow(1 + Integer.parseInt(r.bodyText().split(":")[1]) % 3));
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            keys.add("k" + (i % 4)); // few keys, many messages each: a key's next message is always close behind
        }
        d.open(0, OptionalLong.empty());
        OutboxBatch batch = batch(0, 0, keys);
        d.deliver(batch);
        List<Received> got = server.received();
        Map<String, List<Received>> perKey = got.stream().collect(Collectors.groupingBy(
                r -> r.bodyText().split(":")[0]));
        perKey.forEach((key, rs) -> {
            List<Received> byArrival = rs.stream().sorted(Comparator.comparingLong(Received::arrivedNanos)).toList();
            for (int i = 1; i < byArrival.size(); i++) {
                assertThat(byArrival.get(i).arrivedNanos()).as("two requests of " + key + " in flight at once")
                        .isGreaterThanOrEqualTo(server.answeredNanos(byArrival.get(i - 1)));
            }
        });
        assertThat(maxInFlight(got)).as("requests in flight at once").isBetween(2, concurrency);
        Map<String, List<Integer>> seqPerKey = new HashMap<>();
        for (Received r : server.received()) {
            String[] kv = r.bodyText().split(":");
            seqPerKey.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(Integer.parseInt(kv[1]));
        }
        assertThat(seqPerKey).hasSize(4).allSatisfy((k, seqs) -> assertThat(seqs).as(k).isSorted().hasSize(100));
    }

    /** The most requests whose [arrived, answered] intervals overlap at one moment. */
    private int maxInFlight(List<Received> got) {
        List<long[]> events = new ArrayList<>();
        for (Received r : got) {
            events.add(new long[] {r.arrivedNanos(), 1});
            events.add(new long[] {server.answeredNanos(r), -1});
        }
        events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
        int now = 0;
        int max = 0;
        for (long[] e : events) {
            now += (int) e[1];
            max = Math.max(max, now);
        }
        return max;
    }

    @Test
    void shouldNeverShowASecretInLogsStatusOrMetricsEvenWhenTheTargetEchoesIt() throws Exception {
        String secret = "Bearer xyzzy-2c1d5e-do-not-leak";
        Path token = Files.writeString(dir.resolve("token"), secret);
        OutboxDeliverer d = deliverer(Map.of("max_retries", 1, "retry_backoff", "5ms",
                "secret_headers", Map.of("Authorization", Map.of("file", token.toString()))));
        server.plan(r -> Answer.status(503, "bad token " + r.header("Authorization")));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream err = System.err;
        String status;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        try {
            d.open(0, OptionalLong.empty());
            OutboxBatch batch = batch(0, 0, List.of("k"));
            OutboxDeliveryException e = assertThrows(OutboxDeliveryException.class,
                    () -> d.deliver(batch));
            status = e.getMessage();
        } finally {
            System.setErr(err);
        }
        assertThat(server.received().get(0).header("Authorization")).as("the request carries it").isEqualTo(secret);
        assertThat(status).contains("bad token <secret header Authorization>").doesNotContain("xyzzy");
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("is blocked").doesNotContain("xyzzy");
        for (Meter m : meters.getMeters()) {
            assertThat(m.getId().toString()).doesNotContain("xyzzy");
        }
    }

    @Test
    void shouldSendABatchLongerThanItsTimeOverSeveralCallsEachMessageOnce() throws Exception {
        // the delivery service must poll within max.poll.interval.ms: a call stops starting requests after its time
        server.plan(r -> Answer.slow(100));
        HttpDeliverer d = timedDeliverer(Map.of("concurrency", 1), Duration.ofMillis(350));
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            keys.add("k" + i);
        }
        OutboxBatch batch = batch(0, 0, keys);

        int calls = 0;
        boolean done = false;
        while (!done && calls < 20) {
            calls++;
            try {
                d.deliver(batch);
                done = true;
            } catch (OutboxDeliveryException e) {
                assertThat(e.unfinished()).as("not a failure: no backoff, no status error").isTrue();
                assertThat(e).hasMessageContaining("still to send");
            }
        }

        assertThat(done).isTrue();
        assertThat(calls).as("12 requests of 100 ms one after the other do not fit in one call of 350 ms")
                .isGreaterThan(1);
        assertThat(server.received()).extracting(Received::key).as("each message once")
                .containsExactlyInAnyOrderElementsOf(ids(batch));
    }

    @Test
    void shouldBlockAMessageWhoseRetriesOutlastOneCall() throws Exception {
        // sink audit: the attempts restarted at 0 with every call, so a message whose retries take longer than a
        // call's time was never reported blocked: the sink looped with no status error
        server.plan(r -> Answer.status(503, "db down"));
        HttpDeliverer d = timedDeliverer(Map.of("concurrency", 1, "max_retries", 4, "retry_backoff", "100ms",
                "max_retry_backoff", "100ms"), Duration.ofMillis(150));
        OutboxBatch batch = batch(0, 0, List.of("k1"));

        OutboxDeliveryException last = null;
        for (int calls = 0; calls < 20 && (last == null || last.unfinished()); calls++) {
            try {
                d.deliver(batch);
            } catch (OutboxDeliveryException e) {
                last = e;
            }
            d.open(1, OptionalLong.empty()); // another partition opening between calls (review) keeps the count
        }
        assertThat(last).isNotNull();
        assertThat(last.unfinished()).as("blocked, with a status error, not a call out of time").isFalse();
        assertThat(last).hasMessageContaining("is blocked").hasMessageContaining("after 5 attempts");
        assertThat(server.received()).as("5 attempts in all, over several calls").hasSize(5);
    }

    // --- helpers

    /** An open deliverer whose calls each take at most {@code batchTime}. */
    private HttpDeliverer timedDeliverer(Map<String, Object> extra, Duration batchTime) throws Exception {
        Map<String, Object> p = new HashMap<>(Map.of("url", server.uri().toString()));
        p.putAll(extra);
        SinkSpec spec = new SinkSpec("web", HttpSinkProvider.T_ASYNC_HTTP_SINK, List.of("out"), p);
        HttpDeliverer d = new HttpDeliverer(new SinkContext("pipe", "pipe-app", "compute", spec,
                Map.of("bootstrap.servers", "127.0.0.1:1"), Map.of(), meters),
                HttpSinkParameters.parse(spec, new ArrayList<>()), batchTime);
        deliverers.add(d);
        d.open(0, OptionalLong.empty());
        return d;
    }

    private OutboxDeliverer deliverer(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>(Map.of("url", server.uri().toString(), "key_column", "key"));
        p.putAll(extra);
        SinkSpec spec = new SinkSpec("web", HttpSinkProvider.T_ASYNC_HTTP_SINK, List.of("out"), p);
        HttpSinkProvider provider = new HttpSinkProvider();
        assertThat(provider.validate(spec)).isEmpty();
        OutboxDeliverer d = provider.createDeliverer(new SinkContext("pipe", "pipe-app", "compute", spec,
                Map.of("bootstrap.servers", "127.0.0.1:1"), Map.of(), meters));
        deliverers.add(d);
        return d;
    }

    /** A batch of messages keyed as given, bodies {@code key:sequence-of-the-key}. */
    private static OutboxBatch batch(int partition, long firstOffset, List<String> keys) {
        List<OutboxRecord> records = new ArrayList<>();
        Map<String, Integer> seq = new HashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            String k = keys.get(i);
            int s = seq.merge(k, 1, Integer::sum) - 1;
            byte[] id = ("msg-" + partition + "-" + (firstOffset + i)).getBytes(StandardCharsets.UTF_8);
            records.add(new OutboxRecord(firstOffset + i, MessageId.of(id), k.getBytes(StandardCharsets.UTF_8),
                    (k + ":" + s).getBytes(StandardCharsets.UTF_8), new RecordHeaders(), 0L));
        }
        return new OutboxBatch("web", partition, records, firstOffset + keys.size());
    }

    private static List<String> ids(OutboxBatch batch) {
        return batch.records().stream().map(r -> r.messageId().toString()).toList();
    }

    private static String bodyOf(OutboxBatch batch, String id) {
        return batch.records().stream().filter(r -> r.messageId().toString().equals(id))
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).findFirst().orElseThrow();
    }

    private double count(String name, String tag, String value) {
        var search = meters.find(name);
        if (tag != null) {
            search = search.tag(tag, value);
        }
        return search.counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private double gauge(String name) {
        return meters.get(name).gauge().value();
    }

}
