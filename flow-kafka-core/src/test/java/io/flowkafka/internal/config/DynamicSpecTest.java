package io.flowkafka.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** The dynamic document: a change merges into it, a whole document replaces it, and both are all or nothing. */
class DynamicSpecTest {
    private static final Schema ROW = SchemaBuilder.record("Row").namespace("dyn").fields()
            .requiredString("k").endRecord();

    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static DynamicSpec dynamic() {
        PipelineSpec spec = PipelineSpec.builder("p").stream("rows", ROW)
                .computation("c", c -> c.inputStreamIds("rows").groupBy("hash", ColumnType.UINT64, "farm_hash(k)")
                        .groupBy("k", ColumnType.STRING, null).processingFunction(Noop::new).state("s", ROW)
                        .keyVisitorStream("v", Map.of("period", "10s", "max_scan_rows_per_iteration", 100))
                        .keyVisitorStream("w", Map.of())
                        .sink("out", "TKafkaSink", List.of("rows"), Map.of("topic", "t",
                                "at_most_once_strategy", Map.of("enabled", true, "total_queue_bytes_limit", 1000))))
                .build();
        return new DynamicSpec(spec);
    }

    private static Map<String, Object> visitor(String name, Map<String, ?> settings) {
        return Map.of("computations", Map.of("c", Map.of("key_visitor_streams", Map.of(name, settings))));
    }

    @Test
    void shouldMergeMapsKeyByKeyAndReplaceOtherValues() {
        Map<String, Object> base = visitor("v", Map.of("period", "1h", "finite", false));
        Map<String, Object> merged = DynamicSpec.merge(base, visitor("v", Map.of("period", "2h")));
        assertThat(merged).isEqualTo(visitor("v", Map.of("period", "2h", "finite", false)));
        assertThat(base).as("the base is not changed").isEqualTo(visitor("v", Map.of("period", "1h", "finite", false)));
        assertThat(DynamicSpec.merge(merged, visitor("w", Map.of("period", "3h"))))
                .isEqualTo(Map.of("computations", Map.of("c", Map.of("key_visitor_streams", Map.of(
                        "v", Map.of("period", "2h", "finite", false), "w", Map.of("period", "3h"))))));
    }

    @Test
    void shouldRemoveAKeyGivenNullAndDropMapsLeftEmpty() {
        Map<String, Object> base = visitor("v", Map.of("period", "1h", "finite", false));
        Map<String, Object> nullPeriod = new HashMap<>();
        nullPeriod.put("period", null);
        assertThat(DynamicSpec.merge(base, visitor("v", nullPeriod))).isEqualTo(visitor("v", Map.of("finite", false)));
        Map<String, Object> nullBoth = new HashMap<>(nullPeriod);
        nullBoth.put("finite", null);
        assertThat(DynamicSpec.merge(base, visitor("v", nullBoth))).isEmpty();
    }

    @Test
    void shouldKeepDurationsAsJsonText() {
        assertThat(DynamicSpec.merge(Map.of(), visitor("v", Map.of("period", Duration.ofSeconds(90),
                "background_fill_period", Duration.ofNanos(1500)))))
                .isEqualTo(visitor("v", Map.of("period", "90000ms", "background_fill_period", "1500ns")));
    }

    @Test
    void shouldApplyAChangeOnTopOfEarlierChanges() {
        DynamicSpec d = dynamic();
        d.apply(visitor("v", Map.of("period", "1h")));
        d.apply(visitor("v", Map.of("finite", false)));
        KeyVisitorSettings v = d.keyVisitor("c", "v");
        assertThat(v.period()).isEqualTo(Duration.ofHours(1));
        assertThat(v.finite()).isFalse();
        assertThat(v.maxScanRowsPerIteration()).as("static value").isEqualTo(100);
        assertThat(d.document()).isEqualTo(visitor("v", Map.of("period", "1h", "finite", false)));
    }

    @Test
    void shouldResetEverySettingTheReplacingDocumentDoesNotName() {
        DynamicSpec d = dynamic();
        d.apply(visitor("v", Map.of("period", "1h", "finite", false)));
        d.apply(Map.of("computations", Map.of("c", Map.of("sinks", Map.of("out", Map.of("at_most_once_strategy",
                Map.of("total_queue_bytes_limit", 5000)))))));
        assertThat(d.queueLimit("c", "out")).isEqualTo(5000);

        d.replace(visitor("w", Map.of("max_scan_rows_per_iteration", 7)));

        assertThat(d.keyVisitor("c", "v").period()).as("back to static").isEqualTo(Duration.ofSeconds(10));
        assertThat(d.keyVisitor("c", "v").finite()).as("back to static").isTrue();
        assertThat(d.keyVisitor("c", "w").maxScanRowsPerIteration()).isEqualTo(7);
        assertThat(d.queueLimit("c", "out")).as("back to static").isEqualTo(1000);
        assertThat(d.document()).isEqualTo(visitor("w", Map.of("max_scan_rows_per_iteration", 7)));
    }

    @Test
    void shouldRejectAWholeDocumentListingEveryProblemWithItsFieldAndChangeNothing() {
        DynamicSpec d = dynamic();
        d.apply(visitor("v", Map.of("period", "1h")));
        Map<String, Object> bad = Map.of("computations", Map.of("c", Map.of("key_visitor_streams", Map.of(
                "v", Map.of("period", "soon"), "nope", Map.of("period", "1h")),
                "sinks", Map.of("out", Map.of("at_most_once_strategy", Map.of("total_queue_bytes_limit", 0)))),
                "ghost", Map.of()));

        assertThatThrownBy(() -> d.replace(bad)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dynamic_spec.computations.c.key_visitor_streams.v.period")
                .hasMessageContaining("dynamic_spec.computations.c.key_visitor_streams: computation 'c' has no "
                        + "key-visitor stream 'nope'")
                .hasMessageContaining("dynamic_spec.computations.c.sinks.out.at_most_once_strategy.total_queue_bytes_limit")
                .hasMessageContaining("dynamic_spec.computations.ghost: unknown computation 'ghost'");
        assertThatThrownBy(() -> d.validate(bad)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key_visitor_streams.v.period");

        assertThat(d.keyVisitor("c", "v").period()).isEqualTo(Duration.ofHours(1));
        assertThat(d.queueLimit("c", "out")).isEqualTo(1000);
        assertThat(d.document()).isEqualTo(visitor("v", Map.of("period", "1h")));
    }

    /** An instance starting with a document written for another spec applies what its spec can (helper audit). */
    @Test
    void shouldApplyWhatItCanOfADocumentWrittenForAnotherSpecListingTheRest() {
        DynamicSpec d = dynamic();
        Map<String, Object> other = Map.of("paused", true, "computations", Map.of(
                "c", Map.of("key_visitor_streams", Map.of("v", Map.of("period", "soon"),
                        "w", Map.of("max_scan_rows_per_iteration", 7))),
                "ghost", Map.of()));

        List<String> left = d.replaceWhatApplies(other);

        assertThat(left).hasSize(2);
        assertThat(String.join("; ", left)).contains("dynamic_spec.computations.c.key_visitor_streams.v.period")
                .contains("dynamic_spec.computations.ghost: unknown computation 'ghost'");
        assertThat(d.paused()).as("the pause it names is in force").isTrue();
        assertThat(d.keyVisitor("c", "w").maxScanRowsPerIteration()).isEqualTo(7);
        assertThat(d.keyVisitor("c", "v").period()).as("the entry left out keeps its static value")
                .isEqualTo(Duration.ofSeconds(10));
        assertThat(d.replaceWhatApplies(visitor("w", Map.of("max_scan_rows_per_iteration", 8)))).isEmpty();
        assertThat(d.paused()).as("a whole document: what it does not name is static again").isFalse();

        // a skip expression (or a pause, stop, drain) it cannot read: it must not process in the setting's place
        List<String> unreadable = d.replaceWhatApplies(Map.of("computations", Map.of("c", Map.of(
                "skip_if_expression", "nope = = 1"))));
        assertThat(String.join("; ", unreadable)).contains("dynamic_spec.computations.c.skip_if_expression")
                .contains("this instance stays paused");
        assertThat(d.paused()).isTrue();
    }

    /** Operations audit: a drain or skip the instance cannot apply must not let it read in the setting's place. */
    @Test
    void shouldStayPausedWhenADrainOrSkipNamesAComputationItCannotApplyItTo() {
        DynamicSpec d = dynamic();
        // 'read' renamed in a rolling upgrade: the drain set on it cannot be applied here
        assertThat(String.join("; ", d.replaceWhatApplies(Map.of("computations", Map.of("read",
                Map.of("draining", true)))))).contains("unknown computation 'read'").contains("stays paused");
        assertThat(d.paused()).isTrue();
        assertThat(String.join("; ", d.replaceWhatApplies(Map.of("computations", Map.of("read",
                Map.of("skip_if_expression", "k = 'x'")))))).contains("stays paused");
        assertThat(d.paused()).isTrue();
        // a drain on 'c', which reads no source topic
        assertThat(String.join("; ", d.replaceWhatApplies(Map.of("computations", Map.of("c",
                Map.of("draining", true)))))).contains("has no source_streams").contains("stays paused");
        assertThat(d.paused()).isTrue();

        // what asks nothing of the computation is harmless: not draining, or a removed computation's visitor period
        assertThat(String.join("; ", d.replaceWhatApplies(Map.of("computations", Map.of("read",
                Map.of("draining", false, "key_visitor_streams", Map.of("v", Map.of("period", "1h"))))))))
                .contains("unknown computation 'read'").doesNotContain("stays paused");
        assertThat(d.paused()).isFalse();
    }

    @Test
    void shouldRejectAChangeWhoseMergedDocumentIsInvalidAndKeepTheDocument() {
        DynamicSpec d = dynamic();
        d.apply(visitor("v", Map.of("period", "1h")));
        assertThatThrownBy(() -> d.apply(visitor("v", Map.of("finite", false, "max_scan_rows_per_iteration", 0))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the dynamic spec change was not applied: ")
                .hasMessageContaining("dynamic_spec.computations.c.key_visitor_streams.v.max_scan_rows_per_iteration");
        assertThat(d.keyVisitor("c", "v").finite()).as("nothing of the change").isTrue();
        assertThat(d.document()).isEqualTo(visitor("v", Map.of("period", "1h")));
    }

    @Test
    void shouldResetASettingRemovedWithNull() {
        DynamicSpec d = dynamic();
        d.apply(visitor("v", Map.of("period", "1h")));
        Map<String, Object> reset = new HashMap<>();
        reset.put("period", null);
        d.apply(visitor("v", reset));
        assertThat(d.keyVisitor("c", "v").period()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.document()).isEmpty();
    }

    @Test
    void shouldSetAndClearTheSkipExpressionWithTheWholeDocument() {
        DynamicSpec d = dynamic();
        d.replace(Map.of("computations", Map.of("c", Map.of("skip_if_expression", "k = 'x'"))));
        assertThat(d.skipIf("c").current()).as("set by the document").isNotNull();
        d.replace(visitor("v", Map.of("period", "1h")));
        assertThat(d.skipIf("c").current()).as("a document without it: no expression").isNull();
        assertThatThrownBy(() -> d.replace(Map.of("computations", Map.of("c", Map.of("skip_if_expression",
                "nope = 1"))))).hasMessageContaining("skip_if_expression");
        assertThat(d.keyVisitor("c", "v").period()).as("a rejected document changes nothing")
                .isEqualTo(Duration.ofHours(1));
    }

    @Test
    void shouldPauseThePipelineAndRejectDrainingAComputationWithoutSources() {
        DynamicSpec d = dynamic();
        int[] changes = {0};
        d.onChange(() -> changes[0]++);
        d.apply(Map.of("paused", true));
        assertThat(d.paused()).isTrue();
        assertThat(changes[0]).as("listeners run after each document that takes effect").isEqualTo(1);
        assertThatThrownBy(() -> d.apply(Map.of("paused", "yes"))).hasMessageContaining(
                "dynamic_spec.paused must be true or false but was yes");
        assertThatThrownBy(() -> d.apply(Map.of("computations", Map.of("c", Map.of("draining", true)))))
                .hasMessageContaining("dynamic_spec.computations.c.draining: computation 'c' has no source_streams");
        assertThat(d.drainingComputations()).isEmpty();
        assertThat(changes[0]).as("a rejected change runs no listener").isEqualTo(1);
        assertThat(d.stopped()).isFalse();
        d.apply(Map.of("stopped", true));
        assertThat(d.stopped()).isTrue();
        assertThatThrownBy(() -> d.apply(Map.of("stopped", 1))).hasMessageContaining(
                "dynamic_spec.stopped must be true or false but was 1");
        Map<String, Object> unpause = new HashMap<>();
        unpause.put("paused", null);
        d.apply(unpause);
        assertThat(d.paused()).as("null: back to the static value, not paused").isFalse();
    }
}
