package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.RowFunction;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** {@link TopicOwners}: who reads each internal topic, and the changes a new version would make. */
class TopicOwnersTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("owners").fields()
            .requiredString("user").endRecord();

    /** A source computation writing {@code events}, read by {@code readers} in that order. */
    static PipelineSpec spec(String... readers) {
        PipelineSpec.Builder b = PipelineSpec.builder("p").stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")).outputStreamIds("events"));
        for (String r : readers) {
            b.computation(r, c -> c.inputStreamIds("events")
                    .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                    .processingFunction(() -> (RowFunction) (m, o, ctx) -> { }));
        }
        return b.build();
    }

    private static Map<String, String> owners(String... readers) {
        return TopicOwners.of(PipelineCompiler.compile(spec(readers), "", false));
    }

    @Test
    void shouldNameTheReaderOfEachInternalTopic() {
        assertThat(owners("a", "b")).containsEntry("p.events", "computation 'a'")
                .containsEntry("p.events.b", "computation 'b'");
    }

    @Test
    void shouldFindATopicHandedToAnotherReaderWhenReadersAreReorderedOrRemoved() {
        Map<String, String> before = owners("a", "b");
        assertThat(TopicOwners.changes(before, owners("b", "a")))
                .containsExactly("p.events was read by computation 'a' and would now be read by computation 'b'");
        assertThat(TopicOwners.changes(before, owners("b")))
                .containsExactly("p.events was read by computation 'a' and would now be read by computation 'b'");
    }

    @Test
    void shouldAcceptReadersAddedAfterTheExistingOnesAndTheSameSpec() {
        Map<String, String> before = owners("a", "b");
        assertThat(TopicOwners.changes(before, owners("a", "b"))).isEmpty();
        assertThat(TopicOwners.changes(before, owners("a", "b", "c"))).isEmpty();
        assertThat(TopicOwners.changes(Map.of(), owners("a"))).isEmpty();
        assertThat(TopicOwners.changes(before, owners("c", "a", "b"))).hasSize(1);
    }

    @Test
    void shouldWarnOfATopicNoLongerReadOrDelivered() {
        assertThat(TopicOwners.dropped(owners("a", "b"), owners("a")))
                .singleElement().asString().startsWith("topic p.events.b was read by computation 'b' in the version "
                        + "that last ran, and by nothing in this one");
        assertThat(TopicOwners.dropped(Map.of("p.outbox.s", "sink 's' of computation 'a'"), owners("a")))
                .singleElement().asString().contains("was delivered by sink 's' of computation 'a'",
                        "records still in it are not delivered");
        assertThat(TopicOwners.dropped(owners("a", "b"), owners("a", "b", "c"))).isEmpty();
    }

    @Test
    void shouldWarnOfAnInternalStreamWhoseSchemaChanged() {
        PipelineSpec spec = spec("a");
        Map<String, String> before = TopicOwners.streamSchemas(spec, PipelineCompiler.compile(spec, "", false));
        assertThat(before).containsOnlyKeys("events"); // raw is read from the user's topic
        Schema wider = SchemaBuilder.record("Event").namespace("owners").fields().requiredString("user")
                .optionalLong("at").endRecord();
        PipelineSpec changed = PipelineSpec.builder("p").stream("raw", EVENT).stream("events", wider)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")).outputStreamIds("events"))
                .computation("a", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(() -> (RowFunction) (m, o, ctx) -> { }))
                .build();
        assertThat(TopicOwners.schemaChanges(before,
                TopicOwners.streamSchemas(changed, PipelineCompiler.compile(changed, "", false))))
                .singleElement().asString().startsWith("stream 'events' has another schema than in the version that "
                        + "last ran").contains("Drain the old version");
        assertThat(TopicOwners.schemaChanges(before, before)).isEmpty();
    }
}
