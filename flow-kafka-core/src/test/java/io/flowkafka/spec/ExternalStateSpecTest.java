package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 24.1: the validation of external state (managers, joiners, state joiners, {@code external_names}).
 * The baseline is Flow's "import a reference table into state" pattern (reference 001): a loader writes
 * {@code /reference_state} through a manager, an enricher reads it through a read-only joiner.
 */
class ExternalStateSpecTest {

    /** A valid process function. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    static final Schema REFERENCE = SchemaBuilder.record("Reference").namespace("test").fields()
            .requiredLong("key").requiredString("value").endRecord();
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredLong("key").endRecord();
    static final Schema ROW = SchemaBuilder.record("Row").namespace("test").fields()
            .requiredString("value").endRecord();
    static final Schema OTHER_ROW = SchemaBuilder.record("OtherRow").namespace("test").fields()
            .requiredLong("n").endRecord();
    static final String TABLE = "/reference_state";

    // ---- the valid baseline ----

    private static ComputationSpec.Builder source(String id, String stream, String topic) {
        return ComputationSpec.builder(id).kind(ComputationKind.SOURCE)
                .source(stream, "KafkaSource", Map.of("topics", topic)).outputStreamIds(stream);
    }

    private static ComputationSpec.Builder keyed(String id, String input) {
        return ComputationSpec.builder(id).processingFunction(Noop::new).inputStreamIds(input)
                .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.UINT64, null);
    }

    private static ComputationSpec.Builder loader() {
        return keyed("loader", "reference").externalStateManager(ExternalStateManagerSpec.of(TABLE, ROW));
    }

    private static ComputationSpec.Builder enricher() {
        return keyed("enricher", "events").externalStateJoiner(ExternalStateJoinerSpec.of(TABLE));
    }

    private static PipelineSpec spec(ComputationSpec.Builder... computations) {
        PipelineSpec.Builder p = PipelineSpec.builder("shop").stream("reference", REFERENCE).stream("events", EVENT);
        p.computation(source("read_reference", "reference", "reference-in").build());
        p.computation(source("read_events", "events", "events-in").build());
        for (ComputationSpec.Builder c : computations) {
            p.computation(c.build());
        }
        return p.build();
    }

    private static PipelineSpec spec(ComputationSpec... computations) {
        PipelineSpec.Builder p = PipelineSpec.builder("shop").stream("reference", REFERENCE).stream("events", EVENT);
        p.computation(source("read_reference", "reference", "reference-in").build());
        p.computation(source("read_events", "events", "events-in").build());
        for (ComputationSpec c : computations) {
            p.computation(c);
        }
        return p.build();
    }

    private static List<SpecProblem> errors(PipelineSpec spec) {
        return spec.validate().stream().filter(p -> p.severity() == SpecProblem.Severity.ERROR).toList();
    }

    private static List<SpecProblem> warnings(PipelineSpec spec) {
        return spec.validate().stream().filter(p -> p.severity() == SpecProblem.Severity.WARNING).toList();
    }

    /** Asserts exactly one error, at this computation and field, with these fragments. */
    static SpecProblem assertSingleError(PipelineSpec spec, String computation, String field, String message,
            String fix) {
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).as("errors: %s", errors).hasSize(1);
        SpecProblem p = errors.get(0);
        assertThat(p.computation()).as("computation of %s", p).isEqualTo(computation);
        assertThat(p.field()).as("field of %s", p).isEqualTo(field);
        assertThat(p.message()).contains(message);
        assertThat(p.fix()).contains(fix);
        return p;
    }

    private static SpecProblem assertSingleWarning(PipelineSpec spec, String computation, String field,
            String message) {
        assertThat(errors(spec)).isEmpty();
        List<SpecProblem> warnings = warnings(spec);
        assertThat(warnings).as("warnings: %s", warnings).hasSize(1);
        SpecProblem p = warnings.get(0);
        assertThat(p.computation()).isEqualTo(computation);
        assertThat(p.field()).isEqualTo(field);
        assertThat(p.message()).contains(message);
        return p;
    }

    @Test
    @DisplayName("001: the loader writes to state via a manager (read-write), the enricher reads it via a joiner")
    void shouldAcceptLoaderAndEnricher() {
        assertThat(spec(loader(), enricher()).validate()).isEmpty();
    }

    @Test
    void shouldAcceptFlowClassNames() {
        ComputationSpec.Builder loader = keyed("loader", "reference").externalStateManager(new ExternalStateManagerSpec(
                TABLE, "NYT::NFlow::TSimpleExternalStateManager", ROW, null, Map.of()));
        ComputationSpec.Builder enricher = keyed("enricher", "events").externalStateJoiner(new ExternalStateJoinerSpec(
                TABLE, "NYT::NFlow::TSimpleExternalStateJoiner", null, null, null, false, Map.of()));
        assertThat(spec(loader, enricher).validate()).isEmpty();
    }

    // ---- the service-log source ----

    private static ComputationSpec.Builder serviceLog(String table) {
        return ComputationSpec.builder("log_reader").kind(ComputationKind.SOURCE)
                .source("log", "NYT::NFlow::TServiceLogSource", Map.of("table", table)).outputStreamIds("log");
    }

    private static PipelineSpec withServiceLog(String table) {
        return PipelineSpec.builder("shop").stream("reference", REFERENCE).stream("log", ROW)
                .computation(source("read_reference", "reference", "reference-in").build())
                .computation(loader().build()).computation(serviceLog(table).build()).build();
    }

    @Test
    @DisplayName("002: the service log cycles through a table the pipeline populates through a manager")
    void shouldAcceptServiceLogOfAManagedTable() {
        assertThat(errors(withServiceLog(TABLE))).isEmpty();
    }

    @Test
    void shouldRejectServiceLogOfATableNoManagerDeclares() {
        assertSingleError(withServiceLog("/missing"), "log_reader", "source_streams.log.parameters.table",
                "no computation of the pipeline declares an external state manager", TABLE);
    }

    // ---- names ----

    @Test
    @DisplayName("external state names start with '/' as in Flow")
    void shouldRejectNameWithoutSlash() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(
                ExternalStateManagerSpec.of("reference_state", ROW))), "loader",
                "external_state_managers.reference_state", "must start with '/'", "rename it to '/reference_state'");
    }

    @Test
    void shouldRejectNameDeclaredAsManagerAndJoiner() {
        ComputationSpec base = loader().build();
        ComputationSpec twice = new ComputationSpec(base.id(), base.kind(), base.processingFunction(),
                base.functionSupplier(), base.inputStreamIds(), base.outputStreamIds(), base.sourceStreams(),
                base.sinks(), base.groupBySchema(), base.states(), base.timers(), base.keyVisitorStreams(),
                base.streamsDependency(), base.processingMode(), base.parameters(), base.desiredPartitionCount(),
                base.watermarkStrategy(), base.externalStateManagers(),
                Map.of(TABLE, ExternalStateJoinerSpec.of(TABLE)), Map.of());
        List<SpecProblem> errors = errors(spec(twice));
        assertThat(errors).anySatisfy(p -> {
            assertThat(p.computation()).isEqualTo("loader");
            assertThat(p.field()).isEqualTo("external_state_joiners./reference_state");
            assertThat(p.message()).contains("declared in both external_state_managers and external_state_joiners");
            assertThat(p.fix()).contains("a name of its own");
        });
    }

    @Test
    void shouldRejectInternalStateNameStartingWithSlash() {
        assertSingleError(spec(loader().state("/total", ROW)), "loader", "states./total", "starts with '/'",
                "rename the state to 'total'");
    }

    @Test
    void shouldRejectExternalNameClashingWithInternalState() {
        List<SpecProblem> errors = errors(spec(keyed("loader", "reference").state("table", ROW)
                .externalStateManager(ExternalStateManagerSpec.of("table", ROW))));
        assertThat(errors).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo("external_state_managers.table");
            assertThat(p.message()).contains("is also an internal state of 'loader'");
        });
    }

    // ---- class names ----

    @Test
    void shouldRejectUnknownManagerClassAndSuggestClosest() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(new ExternalStateManagerSpec(TABLE,
                "SimpleExternalStateManager", ROW, null, Map.of())), enricher()), "loader",
                "external_state_managers./reference_state.external_state_manager_class_name",
                "unknown external_state_manager_class_name 'SimpleExternalStateManager'",
                "did you mean 'TSimpleExternalStateManager'?");
    }

    @Test
    void shouldRejectUnknownJoinerClass() {
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(new ExternalStateJoinerSpec(
                TABLE, "TCachingJoiner", null, null, null, false, Map.of()))), "enricher",
                "external_state_joiners./reference_state.external_state_joiner_class_name",
                "unknown external_state_joiner_class_name 'TCachingJoiner'", "TSimpleExternalStateJoiner");
    }

    private static ExternalStateJoinerSpec staticJoiner() {
        return new ExternalStateJoinerSpec("/static", "NYT::NFlow::TStaticTableKeyVisitorJoiner", null, null, null,
                false, Map.of("tables_path", "/tmp/no-such-tables"));
    }

    @Test
    @DisplayName("000: \"a joiner is scanned only if explicitly listed in external_names\": a static-table joiner "
            + "no key visitor lists is rejected")
    void shouldRejectStaticTableJoinerNoVisitorScans() {
        List<SpecProblem> errors = errors(spec(loader(), keyed("enricher", "events")
                .externalStateJoiner(staticJoiner())));
        assertThat(errors).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo("external_state_joiners./static");
            assertThat(p.message()).contains("listed in the external_names of no key visitor");
            assertThat(p.fix()).contains("add '/static' to external_names");
        });
    }

    @Test
    @DisplayName("000: TStaticTableKeyVisitorJoiner is runnable; without flow-kafka-connectors (no StaticTableProvider "
            + "on the class path) the submit says which dependency reads static tables")
    void shouldAskForTheStaticTableProvider() {
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(staticJoiner())
                .keyVisitorStream(KeyVisitorStreamSpec.builder("reconcile").externalNames("/static").build())),
                "enricher", "external_state_joiners./static.external_state_joiner_class_name",
                "needs a StaticTableProvider", "flow-kafka-connectors");
    }

    @Test
    @DisplayName("000: a joiner is scanned \"in no more than one visit stream of the computation (checked at spec "
            + "submit time)\", a static-table joiner too")
    void shouldRejectStaticTableJoinerInTwoVisitStreams() {
        List<SpecProblem> errors = errors(spec(loader(), keyed("enricher", "events").externalStateJoiner(staticJoiner())
                .keyVisitorStream(KeyVisitorStreamSpec.builder("a").externalNames("/static").build())
                .keyVisitorStream(KeyVisitorStreamSpec.builder("b").externalNames("/static").build())));
        assertThat(errors).anySatisfy(p -> assertThat(p.message())
                .contains("joiner '/static' is scanned by key visitors 'a' and 'b'"));
    }

    // ---- managers ----

    @Test
    void shouldRejectManagerWithoutSchema() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(new ExternalStateManagerSpec(TABLE,
                ExternalStateManagerSpec.SIMPLE, null, null, Map.of())), enricher()), "loader",
                "external_state_managers./reference_state.parameters.schema", "has no Avro record schema",
                "set parameters.schema");
    }

    @Test
    void shouldRejectManagerWithNonRecordSchema() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(
                ExternalStateManagerSpec.of(TABLE, Schema.create(Schema.Type.STRING))), enricher()), "loader",
                "external_state_managers./reference_state.parameters.schema", "a schema of type string",
                "wrap the row in a record schema");
    }

    @Test
    @DisplayName("000: if two computations declare writes to the same (cluster, path), submit fails with "
            + "\"claimed for writing\"")
    void shouldRejectTwoManagersOfOneTable() {
        SpecProblem p = assertSingleError(spec(loader(), keyed("auditor", "events").externalStateManager(
                ExternalStateManagerSpec.of("/audit", ROW).withTopic("shop.external.reference_state"))), "auditor",
                "external_state_managers./audit", "claimed for writing", "read-only external_state_joiner");
        assertThat(p.message()).contains("'loader'", "'auditor'", "'shop.external.reference_state'");
    }

    @Test
    void shouldRejectAnIllegalTopic() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(
                ExternalStateManagerSpec.of(TABLE, ROW).withTopic("my table"))), "loader",
                "external_state_managers./reference_state.parameters.topic", "not a legal Kafka topic name", "249");
    }

    @Test
    @DisplayName("no accepted field silently ignored: an unknown manager parameter is a warning")
    void shouldWarnAboutUnknownManagerParameter() {
        SpecProblem p = assertSingleWarning(spec(keyed("loader", "reference").externalStateManager(
                new ExternalStateManagerSpec(TABLE, ExternalStateManagerSpec.SIMPLE, ROW, null,
                        Map.of("topc", "t"))), enricher()), "loader",
                "external_state_managers./reference_state.parameters.topc", "unknown manager parameter 'topc'");
        assertThat(p.fix()).contains("did you mean 'topic'?");
    }

    @Test
    void shouldRejectATypedFieldHiddenInParameters() {
        assertSingleError(spec(keyed("loader", "reference").externalStateManager(new ExternalStateManagerSpec(TABLE,
                ExternalStateManagerSpec.SIMPLE, ROW, null, Map.of("topic", "t")))), "loader",
                "external_state_managers./reference_state.parameters.topic", "would be ignored", "withTopic");
    }

    // ---- joiners ----

    @Test
    void shouldRejectJoinerOfTableNobodyManagesWithoutTopic() {
        assertSingleError(spec(loader(), keyed("enricher", "events")
                .externalStateJoiner(ExternalStateJoinerSpec.of("/reference_stat"))), "enricher",
                "external_state_joiners./reference_stat", "no manager of the pipeline writes it and no "
                        + "parameters.topic is given", "did you mean '/reference_state'?");
    }

    @Test
    void shouldRejectJoinerOfUnmanagedTopicWithoutSchema() {
        assertSingleError(spec(keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/prices").withTopic("prices", null))), "enricher",
                "external_state_joiners./prices.parameters.schema", "no manager of the pipeline writes",
                "set parameters.schema");
    }

    @Test
    void shouldAcceptJoinerOfUnmanagedTopicWithSchema() {
        assertThat(spec(keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/prices").withTopic("prices", ROW))).validate()).isEmpty();
    }

    @Test
    void shouldAcceptJoinerOfManagedTopicUnderAnotherName() {
        assertThat(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/ref").withTopic("shop.external.reference_state", null))).validate())
                .isEmpty();
    }

    @Test
    void shouldRejectJoinerSchemaThatDiffersFromTheManagers() {
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of(TABLE).withTopic("shop.external.reference_state", OTHER_ROW))), "enricher",
                "external_state_joiners./reference_state.parameters.schema", "differs from the one manager",
                "remove parameters.schema");
    }

    @Test
    void shouldRejectKeySchemaMismatchInColumnTypes() {
        ComputationSpec.Builder enricher = ComputationSpec.builder("enricher").processingFunction(Noop::new)
                .inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                .groupBy("key", ColumnType.INT64, null).externalStateJoiner(ExternalStateJoinerSpec.of(TABLE));
        SpecProblem p = assertSingleError(spec(loader(), enricher), "enricher",
                "external_state_joiners./reference_state", "key schema mismatch", "the group_by_schema of 'loader'");
        assertThat(p.message()).contains("'key' int64", "'key' uint64");
    }

    @Test
    void shouldRejectKeySchemaMismatchInTheHashExpression() {
        ComputationSpec.Builder enricher = ComputationSpec.builder("enricher").processingFunction(Noop::new)
                .inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key, key)")
                .groupBy("key", ColumnType.UINT64, null).externalStateJoiner(ExternalStateJoinerSpec.of(TABLE));
        SpecProblem p = assertSingleError(spec(loader(), enricher), "enricher",
                "external_state_joiners./reference_state", "key schema mismatch", "same hash expression");
        assertThat(p.message()).contains("farm_hash(key,key)", "farm_hash(key)");
    }

    @Test
    void shouldAcceptTheSameHashExpressionWrittenDifferently() {
        ComputationSpec.Builder enricher = ComputationSpec.builder("enricher").processingFunction(Noop::new)
                .inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "FARM_HASH( key )")
                .groupBy("key", ColumnType.UINT64, null).externalStateJoiner(ExternalStateJoinerSpec.of(TABLE));
        assertThat(spec(loader(), enricher).validate()).isEmpty();
    }

    private static ExternalStateJoinerSpec withParameters(ExternalStateJoinerSpec j, Map<String, Object> params) {
        return new ExternalStateJoinerSpec(j.name(), j.className(), j.schema(), j.topic(), j.cacheTtl(), j.versioned(),
                params);
    }

    private static final List<Map<String, Object>> OWN_KEY = List.of(
            Map.of("name", "hash", "type", "uint64", "expression", "farm_hash(key)"),
            Map.of("name", "key", "type", "uint64"));

    @Test
    void shouldAcceptKeySchemaOverrideEqualToTheComputationsKey() {
        assertThat(spec(loader(), keyed("enricher", "events").externalStateJoiner(withParameters(
                ExternalStateJoinerSpec.of(TABLE), Map.of("join_on", Map.of("key_schema_override", OWN_KEY)))))
                .validate()).isEmpty();
    }

    @Test
    void shouldRejectKeySchemaOverrideOfAnotherKey() {
        List<Map<String, Object>> other = List.of(Map.of("name", "hash", "type", "uint64", "expression",
                "farm_hash(item)"), Map.of("name", "item", "type", "uint64"));
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(withParameters(
                ExternalStateJoinerSpec.of(TABLE), Map.of("join_on", Map.of("key_schema_override", other))))),
                "enricher", "external_state_joiners./reference_state.join_on.key_schema_override",
                "not runnable yet", "remove join_on");
    }

    @Test
    void shouldRejectVersionedJoinerWithoutTopic() {
        assertSingleError(spec(keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/reference").asVersioned())), "enricher",
                "external_state_joiners./reference.parameters.versioned", "gives no topic", "set parameters.topic");
    }

    @Test
    void shouldRejectVersionedJoinerOfAManagedTable() {
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/reference").withTopic("shop.external.reference_state", ROW).asVersioned())),
                "enricher", "external_state_joiners./reference.parameters.versioned",
                "a versioned reference is not a managed table", "a topic of its own");
    }

    @Test
    @DisplayName("001: a versioned reference behind an atomically switched pointer (the symlink) is accepted")
    void shouldAcceptVersionedJoinerOfItsOwnTopic() {
        assertThat(spec(keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/reference").withTopic("reference-versions", ROW).asVersioned()))
                .validate()).isEmpty();
    }

    @Test
    @DisplayName("joiners are re-read per lookup unless a cache TTL is set: the TTL must be positive")
    void shouldRejectZeroCacheTtl() {
        assertSingleError(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of(TABLE).withCacheTtl(Duration.ZERO))), "enricher",
                "external_state_joiners./reference_state.parameters.cache.ttl", "must be a positive duration", "5s");
    }

    @Test
    void shouldAcceptPositiveCacheTtl() {
        assertThat(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of(TABLE).withCacheTtl(Duration.ofSeconds(5)))).validate()).isEmpty();
    }

    @Test
    void shouldWarnAboutUnknownJoinerAndCacheParameters() {
        List<SpecProblem> warnings = warnings(spec(loader(), keyed("enricher", "events").externalStateJoiner(
                withParameters(ExternalStateJoinerSpec.of(TABLE), Map.of("versoned", true,
                        "cache", Map.of("size", 10))))));
        assertThat(warnings).extracting(SpecProblem::field).containsExactlyInAnyOrder(
                "external_state_joiners./reference_state.parameters.versoned",
                "external_state_joiners./reference_state.parameters.cache.size");
        assertThat(warnings).anySatisfy(p -> assertThat(p.fix()).contains("did you mean 'versioned'?"));
    }

    // ---- state joiners ----

    private static ComputationSpec.Builder counter() {
        return keyed("counter", "reference").state("total", ROW).state("raw");
    }

    @Test
    @DisplayName("flow-catalog §4: state_joiners read another computation's internal state")
    void shouldAcceptStateJoiner() {
        assertThat(spec(counter(), keyed("enricher", "events")
                .stateJoiner(StateJoinerSpec.of("/totals", "counter", "total"))).validate()).isEmpty();
    }

    @Test
    void shouldRejectStateJoinerOfUnknownComputation() {
        assertSingleError(spec(counter(), keyed("enricher", "events")
                .stateJoiner(StateJoinerSpec.of("/totals", "countr", "total"))), "enricher",
                "state_joiners./totals.computation_id", "reads computation 'countr'", "did you mean 'counter'?");
    }

    @Test
    void shouldRejectStateJoinerOfItself() {
        assertSingleError(spec(counter().stateJoiner(StateJoinerSpec.of("/totals", "counter", "total"))), "counter",
                "state_joiners./totals.computation_id", "reads computation 'counter' itself", "context.getState");
    }

    @Test
    void shouldRejectStateJoinerOfUndeclaredState() {
        assertSingleError(spec(counter(), keyed("enricher", "events")
                .stateJoiner(StateJoinerSpec.of("/totals", "counter", "totl"))), "enricher",
                "state_joiners./totals.state_name", "does not declare", "did you mean 'total'?");
    }

    @Test
    void shouldRejectStateJoinerOfStateWithoutSchema() {
        assertSingleError(spec(counter(), keyed("enricher", "events")
                .stateJoiner(StateJoinerSpec.of("/raw", "counter", "raw"))), "enricher",
                "state_joiners./raw.state_name", "has no Avro schema", "an Avro record schema");
    }

    @Test
    void shouldRejectStateJoinerWithAnotherKey() {
        ComputationSpec.Builder enricher = ComputationSpec.builder("enricher").processingFunction(Noop::new)
                .inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                .stateJoiner(StateJoinerSpec.of("/totals", "counter", "total"));
        assertSingleError(spec(counter(), enricher), "enricher", "state_joiners./totals", "key schema mismatch",
                "the group_by_schema of 'counter'");
    }

    @Test
    void shouldRejectStateJoinerOfAComputationKeyedBySourcePartition() {
        ComputationSpec.Builder ordered = ComputationSpec.builder("ordered")
                .kind(ComputationKind.TRANSFORM_ORDERED_SOURCE).processingFunction(Noop::new)
                .source("more", "KafkaSource", Map.of("topics", "more-in")).state("offsets", ROW);
        PipelineSpec spec = PipelineSpec.builder("shop").stream("events", EVENT).stream("more", EVENT)
                .computation(source("read_events", "events", "events-in").build()).computation(ordered.build())
                .computation(keyed("enricher", "events")
                        .stateJoiner(StateJoinerSpec.of("/offsets", "ordered", "offsets")).build())
                .build();
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).anySatisfy(p -> {
            assertThat(p.computation()).isEqualTo("enricher");
            assertThat(p.field()).isEqualTo("state_joiners./offsets.computation_id");
            assertThat(p.message()).contains("key schema mismatch", "no group_by_schema");
        });
    }

    @Test
    @DisplayName("auto_preload: a joiner is always loaded before processing on Kafka, so false is a warning")
    void shouldWarnThatAutoPreloadFalseIsIgnored() {
        SpecProblem p = assertSingleWarning(spec(counter(), keyed("enricher", "events").stateJoiner(
                new StateJoinerSpec("/totals", "counter", "total", Map.of("auto_preload", false)))), "enricher",
                "state_joiners./totals.auto_preload", "always loaded before processing");
        assertThat(p.fix()).contains("set it to true");
    }

    @Test
    void shouldAcceptAutoPreloadTrueAndOwnKeyOverride() {
        assertThat(spec(counter(), keyed("enricher", "events").stateJoiner(new StateJoinerSpec("/totals", "counter",
                "total", Map.of("auto_preload", true, "join_on", Map.of("key_schema_override", OWN_KEY))))).validate())
                .isEmpty();
    }

    // ---- computations without a group-by key ----

    @Test
    void shouldRejectExternalStateOnSourceComputation() {
        PipelineSpec spec = PipelineSpec.builder("shop").stream("reference", REFERENCE)
                .computation(source("read_reference", "reference", "reference-in").externalStateJoiner(
                        ExternalStateJoinerSpec.of("/prices").withTopic("prices", ROW)).build())
                .computation(keyed("count", "reference").build()).build();
        assertSingleError(spec, "read_reference", "external_state_joiners", "has no group_by_schema",
                "to a Transform computation");
    }

    // ---- key visitors: external_names (reference 000) ----

    private static ComputationSpec.Builder visited(ComputationSpec.Builder c, String visitor, String... external) {
        return c.keyVisitorStream(KeyVisitorStreamSpec.builder(visitor).externalNames(external).build());
    }

    @Test
    @DisplayName("000: external_names lists the computation's external-state managers; clear() evicts rows")
    void shouldAcceptManagerInExternalNames() {
        assertThat(spec(visited(loader(), "evict", TABLE), enricher()).validate()).isEmpty();
    }

    @Test
    @DisplayName("000: a joiner is scanned only if explicitly listed in external_names")
    void shouldAcceptJoinerInOneVisitStream() {
        assertThat(spec(loader(), visited(enricher(), "scan", TABLE)).validate()).isEmpty();
    }

    @Test
    @DisplayName("000: a joiner is scanned in no more than one visit stream of the computation (checked at submit)")
    void shouldRejectJoinerInTwoVisitStreams() {
        assertSingleError(spec(loader(), visited(visited(enricher(), "a", TABLE), "b", TABLE)), "enricher",
                "key_visitor_streams.b.external_names", "no more than one visit stream",
                "one key visitor only");
    }

    @Test
    void shouldRejectUnknownExternalName() {
        assertSingleError(spec(visited(loader(), "evict", "/reference_stat"), enricher()), "loader",
                "key_visitor_streams.evict.external_names", "not an external state manager or joiner of 'loader'",
                "did you mean '/reference_state'?");
    }

    @Test
    void shouldRejectStateJoinerInExternalNames() {
        assertSingleError(spec(counter(), visited(keyed("enricher", "events").stateJoiner(
                StateJoinerSpec.of("/totals", "counter", "total")), "scan", "/totals")), "enricher",
                "key_visitor_streams.scan.external_names", "not scannable", "add a key visitor to computation 'counter'");
    }

    @Test
    void shouldRejectVersionedJoinerInExternalNames() {
        assertSingleError(spec(visited(keyed("enricher", "events").externalStateJoiner(
                ExternalStateJoinerSpec.of("/reference").withTopic("reference-versions", ROW).asVersioned()), "scan",
                "/reference")), "enricher", "key_visitor_streams.scan.external_names", "not scannable",
                "remove '/reference'");
    }

    @Test
    void shouldRejectInternalStateInExternalNames() {
        assertSingleError(spec(visited(loader().state("total", ROW), "evict", "total"), enricher()), "loader",
                "key_visitor_streams.evict.external_names", "internal state 'total'", "list it in names instead");
    }

    @Test
    void shouldRejectDuplicateExternalNames() {
        assertSingleError(spec(visited(loader(), "evict", TABLE, TABLE), enricher()), "loader",
                "key_visitor_streams.evict.external_names", "listed more than once", "keep one entry");
    }

    @Test
    @DisplayName("000: a computation with only a visit stream (no inputs, no sources) scans external state; "
            + "group_by_schema is mandatory")
    void shouldAcceptVisitorOnlyComputation() {
        ComputationSpec.Builder auditor = ComputationSpec.builder("auditor").processingFunction(Noop::new)
                .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.UINT64, null)
                .externalStateManager(ExternalStateManagerSpec.of("/audit", ROW))
                .keyVisitorStream(KeyVisitorStreamSpec.builder("audit_iter").externalNames("/audit")
                        .finite(false).build());
        assertThat(spec(auditor).validate()).isEmpty();
    }

    @Test
    void shouldRejectVisitorOnlyComputationWithoutGroupBy() {
        ComputationSpec.Builder auditor = ComputationSpec.builder("auditor").processingFunction(Noop::new)
                .externalStateManager(ExternalStateManagerSpec.of("/audit", ROW))
                .keyVisitorStream(KeyVisitorStreamSpec.builder("audit_iter").externalNames("/audit").build());
        assertSingleError(spec(auditor), "auditor", "group_by_schema", "needs group_by_schema", "uint64");
    }
}
