package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The rules of the key-visitor page (reference 000, "Key Visitor Streams in YTsaurus Flow"), each
 * quoted and shown on {@link FlowTestDriver}. Restart, rebalance and crash rows need a real broker:
 * {@code KeyVisitorIT} in the examples module.
 *
 * <p>Pipeline: source {@code in} (JSON {@code {"key": ..., "cmd": "put"|"del"|"put3"}}) feeds
 * computation {@code keeper}, which keeps a per-key count and visits its keys through visitor
 * stream {@code v}; every visit is reported on stream {@code visits} with the key, its hash and the
 * pass.
 */
class KeyVisitorSemanticsTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("kv").fields()
            .requiredString("key").optionalString("cmd").endRecord();
    static final Schema VISITED = SchemaBuilder.record("Visited").namespace("kv").fields()
            .requiredString("key").requiredLong("hash").requiredLong("pass").requiredLong("event_ts")
            .requiredLong("system_ts").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("kv").fields().requiredLong("n").endRecord();

    /** Counts puts per key; "del" clears the key; "put3" writes three states. Reports each visit. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String cmd = String.valueOf(message.getPayload().get("cmd"));
            if (cmd.equals("del")) {
                context.getState("count").clear();
                context.getState("extra1").clear();
                context.getState("extra2").clear();
                return;
            }
            GenericRecord c = context.getState("count").get().orElseGet(() -> {
                GenericRecord r = new GenericData.Record(COUNT);
                r.put("n", 0L);
                return r;
            });
            c.put("n", (Long) c.get("n") + 1);
            context.getState("count").set(c);
            if (cmd.equals("put3")) {
                context.getState("extra1").set(c);
                context.getState("extra2").set(c);
            }
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            if (visit.getKey().get("key").toString().equals("poison")) {
                throw new IllegalStateException("cannot visit poison");
            }
            output.addMessage(context.createMessageBuilder("visits").set("key", visit.getKey().get("key").toString())
                    .set("hash", visit.getKey().get("hash")).set("pass", visit.getPass())
                    .set("event_ts", visit.getEventTimestamp()).set("system_ts", visit.getSystemTimestamp()).build());
        }
    }

    /** Visits without streams_dependency listing the visitor, which is not allowed to emit. */
    public static final class Undeclared implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            new Keeper().onMessage(message, output, context);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            new Keeper().onVisit(visit, output, context);
        }
    }

    private FlowTestDriver driver;

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    static PipelineSpec spec(Map<String, Object> visitor, boolean finite, UnaryOperator<PipelineSpec.Builder> more) {
        return spec(visitor, finite, more, List.of("events", "v"));
    }

    /** The pipeline, its output {@code visits} depending on {@code visitsDependency}. */
    static PipelineSpec spec(Map<String, Object> visitor, boolean finite, UnaryOperator<PipelineSpec.Builder> more,
            List<String> visitsDependency) {
        Map<String, Object> source = new HashMap<>(Map.of("topics", "in"));
        if (finite) {
            source.put("finite", true);
        }
        return more.apply(PipelineSpec.builder("kv")
                .stream("raw", EVENT).stream("events", EVENT).stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", source)
                        .outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new).state("count", COUNT).state("extra1", COUNT)
                        .state("extra2", COUNT).outputStreamIds("visits")
                        .keyVisitorStream("v", visitor).streamsDependency("visits", visitsDependency)))
                .build();
    }

    private void start(Map<String, Object> visitor) {
        start(spec(visitor, false, b -> b), new Properties());
    }

    private void start(PipelineSpec spec, Properties props) {
        driver = FlowTestDriver.create(spec, props);
    }

    private void put(String key) {
        driver.pipeSource("in", key, "{\"key\":\"" + key + "\",\"cmd\":\"put\"}");
    }

    private void del(String key) {
        driver.pipeSource("in", key, "{\"key\":\"" + key + "\",\"cmd\":\"del\"}");
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, Duration.ofMillis(100));
    }

    private final List<GenericRecord> visits = new ArrayList<>();

    private List<GenericRecord> visits() {
        visits.addAll(driver.readPayloads("visits"));
        return visits;
    }

    /** Visits per key in one pass. */
    private Map<String, Integer> countsInPass(long pass) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (GenericRecord v : visits()) {
            if ((Long) v.get("pass") == pass) {
                counts.merge(v.get("key").toString(), 1, Integer::sum);
            }
        }
        return counts;
    }

    private static List<String> keys(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("k" + i);
        }
        return out;
    }

    @Test
    void shouldVisitEveryKeyExactlyOncePerPeriod() {
        // Guarantees: "Each key per period | You get exactly one visit per key (no duplicates or omissions)."
        start(Map.of("period", "10s", "bucket_count", 4));
        keys(300).forEach(this::put);
        advance(Duration.ofSeconds(35));
        for (long pass = 0; pass < 3; pass++) {
            Map<String, Integer> counts = countsInPass(pass);
            assertThat(counts.keySet()).as("pass %d", pass).containsExactlyInAnyOrderElementsOf(keys(300));
            assertThat(counts.values()).as("pass %d", pass).allMatch(n -> n == 1);
        }
        assertThat(driver.keyVisitorCoverage("keeper", "v")).get().extracting(KeyVisitorCoverage::pass)
                .isEqualTo(3L);
    }

    @Test
    void shouldScanKeysSortedWithinABucketAndBucketsRoundRobin() {
        // Scan order: "Within a bucket, keys are sorted; between buckets, the order is round-robin. Not event-time."
        start(Map.of("period", "10s", "bucket_count", 4));
        keys(400).forEach(this::put);
        advance(Duration.ofSeconds(11));
        List<GenericRecord> pass0 = visits().stream().filter(v -> (Long) v.get("pass") == 0).toList();
        assertThat(pass0).hasSize(400);
        Map<Integer, Long> lastHashInBucket = new HashMap<>();
        List<Integer> bucketSequence = new ArrayList<>();
        for (GenericRecord v : pass0) {
            long hash = (Long) v.get("hash");
            int bucket = (int) (hash >>> 62); // 4 buckets of one partition: the top two bits
            Long last = lastHashInBucket.put(bucket, hash);
            if (last != null) {
                assertThat(Long.compareUnsigned(last, hash)).as("keys sorted within bucket %d", bucket).isLessThan(0);
            }
            if (bucketSequence.isEmpty() || bucketSequence.get(bucketSequence.size() - 1) != bucket) {
                bucketSequence.add(bucket);
            }
        }
        // the scan moves through the buckets in turn: 0, 1, 2, 3, 0, 1, ... (a bucket without keys in a read is skipped)
        for (int i = 1; i < bucketSequence.size(); i++) {
            int prev = bucketSequence.get(i - 1);
            int cur = bucketSequence.get(i);
            assertThat(Math.floorMod(cur - prev, 4)).as("bucket %d follows %d", cur, prev).isPositive();
        }
        assertThat(bucketSequence.size()).as("the buckets are interleaved, not scanned one after another")
                .isGreaterThan(8);
    }

    @Test
    void shouldNotDateVisitsBehindTheSentWatermarkAfterARestartUnderAShorterPeriod() {
        // the rest of a pass re-dated by a shorter period must not come behind the visits output's watermark, also
        // when the task restarted in between (a rolling restart with the new period)
        start(spec(Map.of("period", "1000s"), false, b -> b, List.of("v")), new Properties());
        keys(1000).forEach(this::put);
        advance(Duration.ofSeconds(500));
        long before = visits().stream().mapToLong(v -> (Long) v.get("event_ts")).max().orElseThrow();
        int seen = visits.size();
        assertThat(seen).as("about half of pass 0").isBetween(350, 650);
        driver.reconfigureKeyVisitor("keeper", "v", Map.of("period", "10s"));
        driver.reviveTask();
        advance(Duration.ofSeconds(11));
        List<Message> afterMessages = driver.readStream("visits").stream()
                .filter(m -> (Long) m.getPayload().get("pass") == 0).toList();
        List<GenericRecord> after = afterMessages.stream().map(Message::getPayload).toList();
        assertThat(after).as("the rest of pass 0").hasSize(1000 - seen);
        assertThat(after.stream().mapToLong(v -> (Long) v.get("event_ts")).min().orElseThrow())
                .as("not behind what was dated before the restart (less a step's spread)")
                .isGreaterThan(before - Duration.ofSeconds(60).toNanos());
        // rules audit: the messages a visit emits carry the visit's event timestamp, not the uncorrected one
        assertThat(afterMessages).allSatisfy(m -> assertThat(m.getEventTimestamp())
                .isEqualTo((Long) m.getPayload().get("event_ts")));
    }

    @Test
    void shouldSpreadAPassOverThePeriodAndFollowADynamicPeriodChange() {
        // "The speed is regulated by a throttler configured so that one full pass takes the specified Period."
        start(Map.of("period", "100s"));
        keys(1000).forEach(this::put);
        advance(Duration.ofSeconds(50));
        int halfway = countsInPass(0).size();
        assertThat(halfway).as("about half of the keys after half of the period").isBetween(350, 650);
        // period is dynamic: "changeable on a running pipeline" — a shorter period takes effect at once
        driver.reconfigureKeyVisitor("keeper", "v", Map.of("period", "60s"));
        advance(Duration.ofSeconds(11));
        assertThat(countsInPass(0)).as("elapsed 61 s > the new period of 60 s: pass 0 is complete").hasSize(1000);
        assertThat(driver.keyVisitorCoverage("keeper", "v").orElseThrow().lastPassDuration().orElseThrow().toNanos())
                .isBetween(Duration.ofSeconds(60).toNanos(), Duration.ofSeconds(61).toNanos());
        assertThatThrownBy(() -> driver.reconfigureKeyVisitor("keeper", "v", Map.of("period", "soon")))
                .hasMessageContaining("key_visitor_streams.v.period").hasMessageContaining("duration");
        assertThatThrownBy(() -> driver.reconfigureKeyVisitor("keeper", "nope", Map.of("period", "1h")))
                .hasMessageContaining("no key-visitor stream 'nope'");
    }

    @Test
    void shouldNotVisitKeysDeletedBeforeTheirTurnNorKeysAddedBehindTheScan() {
        // Pass lifecycle: keys present for the whole pass are visited exactly once; a key deleted before the scan
        // reaches it is not visited.
        start(Map.of("period", "10s", "bucket_count", 1));
        keys(400).forEach(this::put);
        advance(Duration.ofSeconds(5));
        List<String> visitedEarly = new ArrayList<>(countsInPass(0).keySet());
        List<String> notYet = keys(400).stream().filter(k -> !visitedEarly.contains(k)).toList();
        assertThat(notYet).hasSizeGreaterThan(100);
        List<String> deleted = notYet.subList(0, 50);
        deleted.forEach(this::del);
        advance(Duration.ofSeconds(6));
        Map<String, Integer> pass0 = countsInPass(0);
        assertThat(pass0.keySet()).doesNotContainAnyElementsOf(deleted).hasSize(350);
        assertThat(pass0.values()).allMatch(n -> n == 1);
    }

    @Test
    void shouldGiveVisitsAnEventTimestampThatShowsScanLag() {
        // "EventTimestamp = now − scheduleLag" with "scheduleLag = max(0, elapsed − ScannedFraction · Period)"
        Properties slow = new Properties();
        slow.put("flow.key.visitor.max.rows.per.punctuation", "5"); // the scan falls behind its 10 s period
        start(spec(Map.of("period", "10s", "max_scan_rows_per_iteration", 5), false, b -> b), slow);
        keys(1000).forEach(this::put);
        advance(Duration.ofSeconds(5));
        List<GenericRecord> early = new ArrayList<>(visits());
        assertThat(early).isNotEmpty();
        advance(Duration.ofSeconds(10));
        GenericRecord last = visits().get(visits().size() - 1);
        long lag = (Long) last.get("system_ts") - (Long) last.get("event_ts");
        // after 15 s at 5 rows per 100 ms about 750 of 1000 keys are visited: lag = 15 s − 0.75 · 10 s ≈ 7.5 s
        assertThat(lag).isBetween(Duration.ofSeconds(5).toNanos(), Duration.ofSeconds(10).toNanos());

        driver.close();
        visits.clear();
        start(Map.of("period", "10s"));
        keys(200).forEach(this::put);
        advance(Duration.ofSeconds(5));
        for (GenericRecord v : visits()) {
            long onSchedule = (Long) v.get("system_ts") - (Long) v.get("event_ts");
            assertThat(onSchedule).as("a scan on schedule has no lag").isBetween(0L, Duration.ofMillis(1).toNanos());
        }
    }

    @Test
    void shouldFinishAfterAFullFinalPassOnceTheInputsCompleted() {
        // Completion of followed streams: "With default finite=%true, the visitor completes after the inputs and
        // sources selected by upstream_streams finish. Default full_final_pass=%true guarantees a full pass started
        // after completion"
        start(spec(Map.of("period", "10s"), true, b -> b), new Properties());
        keys(100).forEach(this::put);
        advance(Duration.ofSeconds(4));
        assertThat(countsInPass(0)).isNotEmpty().hasSizeLessThan(100);
        driver.completeSource("in");
        advance(Duration.ofSeconds(1));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.pass()).isZero();
        assertThat(c.finalPassNext()).as("pass 0 began before completion, so pass 1 is the final one").isTrue();
        advance(Duration.ofSeconds(30));
        c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.completed()).isTrue();
        assertThat(c.pass()).isEqualTo(1L);
        assertThat(countsInPass(1)).as("the final pass is complete").hasSize(100);
        assertThat(countsInPass(2)).as("no pass after the final one").isEmpty();
    }

    @Test
    void shouldResumeScanningWhenSwitchedBackToNotFiniteBeforeTheFinalPass() {
        // "Switching back to %false resumes scanning only before a pass has been marked final"
        start(spec(Map.of("period", "10s"), true, b -> b), new Properties());
        keys(100).forEach(this::put);
        advance(Duration.ofSeconds(4));
        driver.completeSource("in");
        advance(Duration.ofSeconds(1));
        assertThat(driver.keyVisitorCoverage("keeper", "v").orElseThrow().finalPassNext()).isTrue();

        driver.reconfigureKeyVisitor("keeper", "v", Map.of("finite", false));
        advance(Duration.ofSeconds(30));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.completed()).as("pass 1 was to be final, but had not begun: scanning goes on").isFalse();
        assertThat(c.pass()).isGreaterThanOrEqualTo(2L);
        assertThat(countsInPass(2)).as("a pass after the one that was to be final").isNotEmpty();
        assertThat(driver.completedComputations()).doesNotContain("keeper");
    }

    @Test
    void shouldFinishAPassAlreadyMarkedFinalWhenSwitchedBackToNotFinite() {
        // "Switching back to %false resumes scanning only before a pass has been marked final": once marked, the
        // pass stays final
        start(spec(Map.of("period", "10s", "full_final_pass", false), true, b -> b), new Properties());
        keys(100).forEach(this::put);
        advance(Duration.ofSeconds(4));
        driver.completeSource("in");
        advance(Duration.ofSeconds(1));
        KeyVisitorCoverage before = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(before.finalPass()).as("the current pass 0 is marked final").isTrue();
        assertThat(before.completed()).isFalse();

        driver.reconfigureKeyVisitor("keeper", "v", Map.of("finite", false));
        advance(Duration.ofSeconds(30));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.completed()).isTrue();
        assertThat(c.pass()).isZero();
        assertThat(countsInPass(0)).hasSize(100);
        assertThat(countsInPass(1)).as("no pass after the final one").isEmpty();
    }

    @Test
    void shouldMarkTheCurrentPassFinalWithoutAFullFinalPass() {
        // "Setting full_final_pass=%false marks the current pass final and can finish sooner without that guarantee."
        start(spec(Map.of("period", "10s", "full_final_pass", false), true, b -> b), new Properties());
        keys(100).forEach(this::put);
        advance(Duration.ofSeconds(4));
        driver.completeSource("in");
        advance(Duration.ofSeconds(8));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.completed()).isTrue();
        assertThat(c.pass()).isZero();
        assertThat(countsInPass(0)).hasSize(100);
    }

    @Test
    void shouldSayInStatusAndInTheLogThatTheFinalPassIsAwaitedAndUntilWhen() {
        // A final pass is spread over the period like any pass: a finite pipeline waits up to two periods after its
        // inputs completed. That wait is said, not silent: status() (INFO) and one log line, with when it ends.
        start(spec(Map.of("period", "10s"), true, b -> b), new Properties());
        keys(30).forEach(this::put);
        advance(Duration.ofSeconds(4));
        assertThat(driver.status()).as("inputs not completed: nothing awaited yet").isEmpty();
        List<String> log = captureStderr(() -> {
            driver.completeSource("in");
            advance(Duration.ofSeconds(2));
        });
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        String end = c.passStart().plusSeconds(20).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        assertThat(driver.status()).isNotEmpty().allSatisfy(e -> {
            assertThat(e.path()).isEqualTo("/key_visitor/v/final_pass");
            assertThat(e.severity()).isEqualTo(StatusError.Severity.INFO);
            assertThat(e.isError()).isFalse();
            assertThat(e.message()).contains("Key visitor 'v'", "full final pass", "period (10s)",
                    "it ends about " + end, "computation 'keeper' completes after it");
        });
        assertThat(log).filteredOn(l -> l.contains("waits for key visitor 'v' of computation 'keeper'"))
                .as("one INFO line for the whole computation").singleElement().asString()
                .contains("INFO", "pipeline 'kv'", "it ends about " + end);
        advance(Duration.ofSeconds(30));
        assertThat(driver.isCompleted()).isTrue();
        assertThat(driver.status()).as("cleared once the final pass ended").isEmpty();
    }

    /** The lines written to System.err (where slf4j-simple logs) while {@code r} runs. */
    private static List<String> captureStderr(Runnable r) {
        java.io.PrintStream original = System.err;
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setErr(original);
        }
        String text = bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
        original.print(text);
        return text.lines().toList();
    }

    /** Reads {@code counts} and does nothing: a computation downstream of the visitor's computation. */
    public static final class Sink implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    @Test
    void shouldCompleteTheOutputsThatDoNotListTheVisitorWhileItScans() {
        // "By default, the visit stream is not part of the computation's streams_dependency: [...] a stuck visitor
        // shouldn't block the completion of output streams."
        PipelineSpec spec = PipelineSpec.builder("kv")
                .stream("raw", EVENT).stream("events", EVENT).stream("visits", VISITED).stream("counts", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in", "finite", true)).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new).state("count", COUNT).state("extra1", COUNT)
                        .state("extra2", COUNT).outputStreamIds("visits", "counts")
                        .keyVisitorStream("v", Map.of("period", "5s", "finite", false))
                        .streamsDependency("visits", List.of("events", "v")))
                .computation("down", c -> c.inputStreamIds("counts")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Sink::new))
                .build();
        start(spec, new Properties());
        keys(20).forEach(this::put);
        driver.completeSource("in");
        advance(Duration.ofSeconds(12));

        assertThat(driver.keyVisitorCoverage("keeper", "v").orElseThrow().completed()).isFalse();
        assertThat(driver.completedComputations()).as("'counts' completed with 'events'; 'keeper' scans on")
                .contains("read", "down").doesNotContain("keeper");
    }

    @Test
    void shouldKeepScanningWhenNotFiniteAndSwitchAtRunTime() {
        // "finite=%false | No final pass: the visitor scans while the pipeline runs."
        start(spec(Map.of("period", "5s", "finite", false), true, b -> b), new Properties());
        keys(50).forEach(this::put);
        driver.completeSource("in");
        advance(Duration.ofSeconds(21));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("keeper", "v").orElseThrow();
        assertThat(c.completed()).isFalse();
        assertThat(c.pass()).isGreaterThanOrEqualTo(4L);
        // a visitor for the pipeline's lifetime holds its computation's completion, not only its own
        assertThat(driver.completedComputations()).as("its inputs completed, its visitor scans on")
                .doesNotContain("keeper");
        assertThat(driver.isCompleted()).isFalse();
        assertThat(driver.status()).as("the hold is said, not silent").isNotEmpty().allSatisfy(e -> {
            assertThat(e.path()).isEqualTo("/key_visitor/v/final_pass");
            assertThat(e.severity()).isEqualTo(StatusError.Severity.INFO);
            assertThat(e.message()).contains("finite: false", "never completes", "reconfigureKeyVisitor");
        });
        // "This dynamic setting can be switched on a running pipeline to request completion."
        driver.reconfigureKeyVisitor("keeper", "v", Map.of("finite", true));
        advance(Duration.ofSeconds(12));
        assertThat(driver.keyVisitorCoverage("keeper", "v").orElseThrow().completed()).isTrue();
        assertThat(driver.completedComputations()).contains("keeper");
        assertThat(driver.isCompleted()).isTrue();
    }

    @Test
    void shouldReportAScanCapStallAndClearItOnceTheScanMoves() {
        // Diagnostics: "If a single key has more internal-state names than max_scan_rows_per_iteration, the scan
        // can't progress ... reports the error /key_visitor/<stream>/scan_cap_stall ... The error clears
        // automatically once the read progresses."
        start(Map.of("period", "1s", "max_scan_rows_per_iteration", 2));
        driver.pipeSource("in", "wide", "{\"key\":\"wide\",\"cmd\":\"put3\"}"); // 3 rows: count, extra1, extra2
        advance(Duration.ofSeconds(2));
        assertThat(driver.status()).extracting(StatusError::path).containsExactly("/key_visitor/v/scan_cap_stall");
        assertThat(driver.status().get(0).message()).contains("max_scan_rows_per_iteration = 2");
        assertThat(visits()).isEmpty();
        driver.reconfigureKeyVisitor("keeper", "v", Map.of("max_scan_rows_per_iteration", 3));
        advance(Duration.ofSeconds(1));
        assertThat(driver.status()).isEmpty();
        assertThat(visits()).extracting(v -> v.get("key").toString()).contains("wide");
    }

    @Test
    void shouldSendAFailingVisitToTheDeadLetterTopicAndGoOn() {
        start(Map.of("period", "2s"));
        put("poison");
        keys(20).forEach(this::put);
        advance(Duration.ofSeconds(3));
        assertThat(countsInPass(0)).hasSize(20);
        List<FlowTestDriver.DeadLetter> dead = driver.readDeadLetters().stream()
                .filter(d -> "0".equals(d.valueAsString())).toList();
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).errorMessage()).isEqualTo("cannot visit poison");
    }

    @Test
    void shouldRejectOutputsFromVisitsWithoutTheVisitorInStreamsDependency() {
        // "If the process function emits messages to output from ProcessVisit, you must explicitly list the visit
        // stream as the parent of that output in streams_dependency."
        PipelineSpec spec = PipelineSpec.builder("kv").stream("raw", EVENT).stream("events", EVENT)
                .stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Undeclared::new).state("count", COUNT).state("extra1", COUNT)
                        .state("extra2", COUNT).outputStreamIds("visits").keyVisitorStream("v", Map.of("period", "2s")))
                .build();
        start(spec, new Properties());
        keys(3).forEach(this::put);
        advance(Duration.ofSeconds(3));
        assertThat(visits()).isEmpty();
        List<FlowTestDriver.DeadLetter> pass0 = driver.readDeadLetters().stream()
                .filter(d -> "0".equals(d.valueAsString())).toList(); // a dead visit's value is its pass
        assertThat(pass0).hasSize(3).allSatisfy(d -> assertThat(d.errorMessage())
                .contains("streams_dependency.visits does not list 'v'"));
    }

    @Test
    void shouldValidateKeyVisitorSpecsBeforeStart() {
        // "group_by_schema must start with a uint64 column ... The check runs at spec submit time."
        PipelineSpec bad = PipelineSpec.builder("kv").stream("raw", EVENT).stream("events", EVENT)
                .stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new).state("count", COUNT).outputStreamIds("visits")
                        .keyVisitorStream("v", Map.of("names", List.of("cuont"), "upstream_streams", List.of("nope"),
                                "period", "often")))
                .build();
        assertThatThrownBy(bad::validated).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("group_by_schema[0]")
                .hasMessageContaining("did you mean 'count'")
                .hasMessageContaining("follows 'nope'")
                .hasMessageContaining("key_visitor_streams.v.period must be a duration");
    }

    @Test
    void shouldReportVisitorMetrics() {
        // Observability: "new_count_per_sec and offered_count_per_sec both estimate the rate required to visit all
        // matching keys within period ... ready_count reports buffered visits, and processed_count_per_sec reports
        // committed processing."
        start(Map.of("period", "10s"));
        keys(500).forEach(this::put);
        advance(Duration.ofSeconds(12));
        var registry = driver.meterRegistry();
        double processed = registry.find("flow.key_visitor.processed_count").tag("stream", "v").functionCounter()
                .count();
        assertThat(processed).isEqualTo(visits().size());
        assertThat(registry.find("flow.key_visitor.new_count_per_sec").tag("computation", "keeper").gauge().value())
                .as("500 keys / 10 s").isBetween(45.0, 55.0);
        assertThat(registry.find("flow.key_visitor.offered_count_per_sec").gauge().value()).isBetween(45.0, 55.0);
        assertThat(registry.find("flow.key_visitor.pass_duration_seconds").gauge().value()).isBetween(10.0, 10.2);
        assertThat(registry.find("flow.key_visitor.ready_count").gauge().value()).isZero();
        assertThat(registry.find("flow.key_visitor.pass").gauge().value()).isEqualTo(1.0);
    }

    @Test
    void shouldReportZeroRatesOnceAFiniteVisitorCompleted() {
        // Scheduled visit rate: "Once the finite visitor becomes Empty, its New and Offered rates are zero."
        start(spec(Map.of("period", "10s", "full_final_pass", false), true, b -> b), new Properties());
        keys(100).forEach(this::put);
        advance(Duration.ofSeconds(4));
        var registry = driver.meterRegistry();
        assertThat(registry.find("flow.key_visitor.new_count_per_sec").tag("computation", "keeper").gauge().value())
                .as("while it scans").isPositive();
        driver.completeSource("in");
        advance(Duration.ofSeconds(10));
        assertThat(driver.keyVisitorCoverage("keeper", "v").orElseThrow().completed()).isTrue();
        assertThat(registry.find("flow.key_visitor.new_count_per_sec").tag("computation", "keeper").gauge().value())
                .isZero();
        assertThat(registry.find("flow.key_visitor.offered_count_per_sec").tag("computation", "keeper").gauge()
                .value()).isZero();
    }

    /** A SwiftMap computation that emits from a visit, which Flow forbids. */
    public static final class EmittingSwift implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            new Keeper().onMessage(message, output, context);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            new Keeper().onVisit(visit, output, context);
        }
    }

    @Test
    void shouldForbidASwiftMapToEmitFromAVisitButLetItTouchState() {
        // "TProcessFunctionSwiftMapComputation | ✓ (only for state handling: emitting to output from ProcessVisit is
        // forbidden)"
        PipelineSpec spec = PipelineSpec.builder("kv").stream("raw", EVENT).stream("events", EVENT)
                .stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(EmittingSwift::new).state("count", COUNT).state("extra1", COUNT)
                        .state("extra2", COUNT).outputStreamIds("visits").keyVisitorStream("v", Map.of("period", "2s")))
                .build();
        start(spec, new Properties());
        put("a");
        advance(Duration.ofSeconds(3));
        assertThat(visits()).isEmpty();
        assertThat(driver.readDeadLetters()).isNotEmpty().allSatisfy(d -> assertThat(d.errorMessage())
                .contains("SwiftMap computation 'keeper' emitted to 'visits' from onVisit"));
        PipelineSpec declared = PipelineSpec.builder("kv").stream("raw", EVENT).stream("events", EVENT)
                .stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(EmittingSwift::new).state("count", COUNT).outputStreamIds("visits")
                        .keyVisitorStream("v", Map.of()).streamsDependency("visits", List.of("v")))
                .build();
        assertThatThrownBy(declared::validated).hasMessageContaining("a SwiftMap computation may not emit from onVisit");
    }

    /** Visits the keys of its own state only; it has no inputs. */
    public static final class Auditor implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            throw new IllegalStateException("an auditor has no inputs");
        }
    }

    @Test
    void shouldRunAVisitorOnlyComputationAndCompleteItAfterOneFinalPassWhenFinite() {
        // Computation with only a visit stream: "With default %true, there are no inputs to wait for, so its first
        // pass is final and the partitions complete after one full scan." It gets its tasks from a control topic.
        PipelineSpec spec = PipelineSpec.builder("audit").stream("noop", COUNT)
                .computation("auditor", c -> c.groupBy("hash", ColumnType.UINT64, null)
                        .processingFunction(Auditor::new).state("count", COUNT).desiredPartitionCount(2)
                        .keyVisitorStream("v", Map.of("period", "2s")))
                .build();
        start(spec, new Properties());
        advance(Duration.ofSeconds(1));
        KeyVisitorCoverage c = driver.keyVisitorCoverage("auditor", "v").orElseThrow();
        assertThat(c.finalPass()).as("the first pass is final").isTrue();
        assertThat(c.completed()).isFalse();
        advance(Duration.ofSeconds(2));
        assertThat(driver.keyVisitorCoverage("auditor", "v").orElseThrow().completed()).isTrue();
    }

    static final Schema REQUEST = SchemaBuilder.record("Request").namespace("kv").fields()
            .requiredString("key").requiredLong("pass").endRecord();

    /** Keeps keys; each visit asks the responder about its key; a response is counted in state. */
    public static final class Asker implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord c = context.getState("count").get().orElseGet(() -> {
                GenericRecord r = new GenericData.Record(COUNT);
                r.put("n", 0L);
                return r;
            });
            if (message.getStreamId().equals("responses")) {
                c.put("n", (Long) c.get("n") + 1);
            }
            context.getState("count").set(c);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("requests").set("key", visit.getKey().get("key").toString())
                    .set("pass", visit.getPass()).build());
        }
    }

    /** Answers every request. */
    public static final class Responder implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("responses").setPayload(message.getPayload()).build());
        }
    }

    @Test
    void shouldCompleteACyclicTopologyWhenTheVisitorFollowsOnlyTheInputsThatDoNotDependOnIt() {
        // streams_dependency: "If that output comes back to the same computation as an input stream, you get a cyclic
        // topology ... keep in upstream_streams only the input streams that don't depend on the visitor"
        PipelineSpec spec = PipelineSpec.builder("cycle").stream("raw", EVENT).stream("keys", EVENT)
                .stream("requests", REQUEST).stream("responses", REQUEST)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in", "finite", true)).outputStreamIds("keys"))
                .computation("asker", c -> c.inputStreamIds("keys", "responses")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Asker::new).state("count", COUNT).outputStreamIds("requests")
                        .keyVisitorStream("visit_iter", Map.of("period", "2s", "upstream_streams", List.of("keys")))
                        .streamsDependency("requests", List.of("keys", "visit_iter")))
                .computation("responder", c -> c.inputStreamIds("requests")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Responder::new).outputStreamIds("responses"))
                .build();
        start(spec, new Properties());
        keys(20).forEach(this::put);
        advance(Duration.ofSeconds(3));
        assertThat(driver.isCompleted()).isFalse();
        driver.completeSource("in");
        advance(Duration.ofSeconds(8));
        assertThat(driver.keyVisitorCoverage("asker", "visit_iter").orElseThrow().completed()).isTrue();
        assertThat(driver.completedComputations()).containsExactlyInAnyOrder("read", "asker", "responder");
        assertThat(driver.isCompleted()).isTrue();
        // every key was asked once per pass and every answer came back
        long passes = driver.keyVisitorCoverage("asker", "visit_iter").orElseThrow().pass() + 1;
        for (String k : keys(20)) {
            assertThat(driver.stateForPayload("asker", "count", "keys", Map.of("key", k))).get().extracting(r -> (Long) r.get("n"))
                    .as("answers for %s", k).isEqualTo(passes);
        }
    }

    /** Each visit of another key adds one to the hub's count; the hub's own visit reports its count. */
    public static final class Hub implements RowFunction {
        static volatile GenericRecord hubKey;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (message.getPayload().get("key").toString().equals("hub")) {
                hubKey = context.getKey();
            }
            new Keeper().onMessage(message, output, context);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            if (visit.getKey().get("key").toString().equals("hub")) {
                long n = (Long) context.getState("count").get().orElseThrow().get("n");
                output.addMessage(context.createMessageBuilder("visits").set("key", "hub").set("hash", 0L)
                        .set("pass", visit.getPass()).set("event_ts", n).set("system_ts", 0L).build());
            } else {
                var hub = context.getState("count", hubKey);
                GenericRecord c = hub.get().orElseThrow();
                c.put("n", (Long) c.get("n") + 1);
                hub.set(c);
                output.addMessage(context.createMessageBuilder("visits").set("key", visit.getKey().get("key").toString())
                        .set("hash", 0L).set("pass", visit.getPass()).set("event_ts", 0L).set("system_ts", 0L).build());
            }
        }
    }

    @Test
    void shouldSeeStateWrittenByEarlierVisitsOfTheSameRead() {
        // a visit reads its key's state as the scan read it, unless a visit of the same scan wrote it since
        PipelineSpec spec = PipelineSpec.builder("kv").stream("raw", EVENT).stream("events", EVENT)
                .stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Hub::new).state("count", COUNT).outputStreamIds("visits")
                        .keyVisitorStream("v", Map.of("period", "1s", "bucket_count", 1))
                        .streamsDependency("visits", List.of("v")))
                .build();
        start(spec, new Properties());
        put("hub");
        keys(50).forEach(this::put);
        advance(Duration.ofMillis(1100)); // one read covers the whole range: all rows are read before any visit
        List<GenericRecord> pass0 = visits().stream().filter(v -> (Long) v.get("pass") == 0).toList();
        assertThat(pass0).hasSize(51);
        int before = 0;
        for (GenericRecord v : pass0) {
            if (v.get("key").toString().equals("hub")) {
                assertThat((Long) v.get("event_ts")).as("the hub's count: 1 put + one per key visited before it")
                        .isEqualTo(1L + before);
                break;
            }
            before++;
        }
        assertThat(before).as("some keys were visited before the hub").isPositive();
    }
}
