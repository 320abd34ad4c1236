package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 24.1: {@code external_state_managers}, {@code external_state_joiners} and {@code state_joiners}
 * in JSON and YAML specs, with Flow's field and class names.
 */
class ExternalStateLoaderTest {
    private static final String NOOP = ExternalStateSpecTest.Noop.class.getName();
    private static final String ROW = "{\"type\": \"record\", \"name\": \"Row\", \"namespace\": \"test\", \"fields\": "
            + "[{\"name\": \"value\", \"type\": \"string\"}]}";
    private static final String GROUP_BY = "[{\"name\": \"hash\", \"type\": \"uint64\", \"expression\": "
            + "\"farm_hash(key)\"}, {\"name\": \"key\", \"type\": \"uint64\"}]";

    /** Reference 001's loader + enricher, with a versioned reference, a cache TTL and a state joiner. */
    static final String JSON = """
            {"name": "shop",
             "streams": {
               "reference": {"schema": {"type": "record", "name": "Reference", "namespace": "test", "fields": [
                   {"name": "key", "type": "long"}, {"name": "value", "type": "string"}]}},
               "events": {"schema": {"type": "record", "name": "Event", "namespace": "test", "fields": [
                   {"name": "key", "type": "long"}]}}},
             "computations": {
               "read_reference": {"computation_class_name": "Source", "output_stream_ids": ["reference"],
                   "source_streams": {"reference": {"source_class_name": "KafkaSource",
                                                    "parameters": {"topics": ["reference-in"]}}}},
               "read_events": {"computation_class_name": "Source", "output_stream_ids": ["events"],
                   "source_streams": {"events": {"source_class_name": "KafkaSource",
                                                 "parameters": {"topics": ["events-in"]}}}},
               "counter": {"processing_function": "%1$s", "input_stream_ids": ["reference"],
                   "group_by_schema": %2$s, "states": {"total": {"schema": %3$s}}},
               "loader": {"processing_function": "%1$s", "input_stream_ids": ["reference"],
                   "group_by_schema": %2$s,
                   "external_state_managers": {"/reference_state": {
                       "external_state_manager_class_name": "NYT::NFlow::TSimpleExternalStateManager",
                       "parameters": {"schema": %3$s}}}},
               "enricher": {"processing_function": "%1$s", "input_stream_ids": ["events"],
                   "group_by_schema": %2$s,
                   "external_state_joiners": {
                     "/reference_state": {
                       "external_state_joiner_class_name": "NYT::NFlow::TSimpleExternalStateJoiner",
                       "parameters": {"cache": {"ttl": "5s"}, "join_on": {"key_schema_override": %2$s}}},
                     "/prices": {
                       "external_state_joiner_class_name": "TSimpleExternalStateJoiner",
                       "parameters": {"topic": "prices", "schema": %3$s, "versioned": true}}},
                   "state_joiners": {"/totals": {"computation_id": "counter", "state_name": "total",
                                                 "auto_preload": true}},
                   "key_visitor_streams": {"scan": {"external_names": ["/reference_state"]}}}}}
            """.formatted(NOOP, GROUP_BY, ROW);

    static final String YAML = """
            name: shop
            streams:
              reference:
                schema: {type: record, name: Reference, namespace: test,
                         fields: [{name: key, type: long}, {name: value, type: string}]}
              events:
                schema: {type: record, name: Event, namespace: test, fields: [{name: key, type: long}]}
            computations:
              read_reference:
                computation_class_name: Source
                output_stream_ids: [reference]
                source_streams:
                  reference: {source_class_name: KafkaSource, parameters: {topics: [reference-in]}}
              read_events:
                computation_class_name: Source
                output_stream_ids: [events]
                source_streams:
                  events: {source_class_name: KafkaSource, parameters: {topics: [events-in]}}
              counter:
                processing_function: %1$s
                input_stream_ids: [reference]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(key)}
                  - {name: key, type: uint64}
                states:
                  total: {schema: {type: record, name: Row, namespace: test, fields: [{name: value, type: string}]}}
              loader:
                processing_function: %1$s
                input_stream_ids: [reference]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(key)}
                  - {name: key, type: uint64}
                external_state_managers:
                  /reference_state:
                    external_state_manager_class_name: NYT::NFlow::TSimpleExternalStateManager
                    parameters:
                      schema: {type: record, name: Row, namespace: test, fields: [{name: value, type: string}]}
              enricher:
                processing_function: %1$s
                input_stream_ids: [events]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(key)}
                  - {name: key, type: uint64}
                external_state_joiners:
                  /reference_state:
                    external_state_joiner_class_name: NYT::NFlow::TSimpleExternalStateJoiner
                    parameters:
                      cache: {ttl: 5s}
                      join_on:
                        key_schema_override:
                          - {name: hash, type: uint64, expression: farm_hash(key)}
                          - {name: key, type: uint64}
                  /prices:
                    external_state_joiner_class_name: TSimpleExternalStateJoiner
                    parameters:
                      topic: prices
                      versioned: true
                      schema: {type: record, name: Row, namespace: test, fields: [{name: value, type: string}]}
                state_joiners:
                  /totals: {computation_id: counter, state_name: total, auto_preload: true}
                key_visitor_streams:
                  scan: {external_names: [/reference_state]}
            """.formatted(NOOP);

    @Test
    @DisplayName("001: a manager (read-write) in the loader, a joiner (read-only) in the enricher, from JSON")
    void shouldLoadExternalStateFromJson() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(JSON);

        assertThat(spec.warnings()).isEmpty();
        assertThat(spec.validate()).isEmpty();
        Schema row = new Schema.Parser().parse(ROW);
        assertThat(spec.computations().get("loader").externalStateManagers())
                .containsExactly(Map.entry("/reference_state", ExternalStateManagerSpec.of("/reference_state", row)));
        ComputationSpec enricher = spec.computations().get("enricher");
        assertThat(enricher.externalStateJoiners()).containsOnlyKeys("/reference_state", "/prices");
        ExternalStateJoinerSpec reference = enricher.externalStateJoiners().get("/reference_state");
        assertThat(reference.className()).isEqualTo(ExternalStateJoinerSpec.SIMPLE);
        assertThat(reference.cacheTtl()).isEqualTo(Duration.ofSeconds(5));
        assertThat(reference.topic()).isNull();
        assertThat(reference.schema()).isNull();
        assertThat(reference.versioned()).isFalse();
        assertThat(reference.tableTopic(spec.name())).isEqualTo("shop.external.reference_state");
        assertThat(reference.parameters()).containsOnlyKeys("join_on");
        assertThat(enricher.externalStateJoiners().get("/prices"))
                .isEqualTo(ExternalStateJoinerSpec.of("/prices").withTopic("prices", row).asVersioned());
        assertThat(enricher.stateJoiners()).containsExactly(Map.entry("/totals",
                new StateJoinerSpec("/totals", "counter", "total", Map.of("auto_preload", true))));
    }

    @Test
    void shouldLoadTheSameSpecFromYamlAsFromJson() {
        PipelineSpec yaml = PipelineSpecLoader.fromYaml(YAML);

        assertThat(yaml).isEqualTo(PipelineSpecLoader.fromJson(JSON));
        assertThat(yaml.validate()).isEmpty();
    }

    @Test
    void shouldNoLongerCallExternalStateUnsupported() {
        assertThat(PipelineSpecLoader.fromJson(JSON).allWarnings()).noneSatisfy(
                p -> assertThat(p.message()).contains("not supported by flow-kafka yet"));
    }

    private static String enricher(String joiners) {
        return """
                {"name": "shop", "streams": {"events": {"schema": {"type": "record", "name": "Event", "fields": [
                     {"name": "key", "type": "long"}]}}},
                 "computations": {
                   "read_events": {"computation_class_name": "Source", "output_stream_ids": ["events"],
                       "source_streams": {"events": {"source_class_name": "KafkaSource",
                                                     "parameters": {"topics": ["events-in"]}}}},
                   "enricher": {"processing_function": "%s", "input_stream_ids": ["events"],
                       "group_by_schema": %s, %s}}}
                """.formatted(NOOP, GROUP_BY, joiners);
    }

    private static List<SpecProblem> loadErrors(String json) {
        return catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(json)).problems();
    }

    @Test
    @DisplayName("a YT path is an error with a fix: name the table's topic")
    void shouldRejectYtPath() {
        assertThat(loadErrors(enricher("\"external_state_joiners\": {\"/reference_state\": {"
                + "\"external_state_joiner_class_name\": \"TSimpleExternalStateJoiner\","
                + "\"parameters\": {\"path\": \"<cluster=primary>//path/to/state\"}}}"))).singleElement().satisfies(p -> {
                    assertThat(p.computation()).isEqualTo("enricher");
                    assertThat(p.field()).isEqualTo("external_state_joiners./reference_state.parameters.path");
                    assertThat(p.message()).contains("//path/to/state", "compacted topic");
                    assertThat(p.fix()).contains("name the table's topic: parameters.topic");
                });
    }

    @Test
    @DisplayName("000: Flow's NYT::NFlow::TStaticTableKeyVisitorJoiner loads from a spec file as the static-table "
            + "joiner, its tables_path in parameters (without flow-kafka-connectors the submit asks for it)")
    void shouldLoadTheStaticTableJoinerByItsFlowName() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(enricher("\"external_state_joiners\": {\"/ledger\": {"
                + "\"external_state_joiner_class_name\": \"NYT::NFlow::TStaticTableKeyVisitorJoiner\", "
                + "\"parameters\": {\"tables_path\": \"/data/ledger\"}}},"
                + "\"key_visitor_streams\": {\"reconcile\": {\"external_names\": [\"/ledger\"]}}"));
        ExternalStateJoinerSpec joiner = spec.computations().get("enricher").externalStateJoiners().get("/ledger");
        assertThat(joiner.className()).isEqualTo(ExternalStateJoinerSpec.STATIC_TABLE_KEY_VISITOR);
        assertThat(joiner.parameters()).containsEntry("tables_path", "/data/ledger");
        assertThat(spec.validate()).filteredOn(p -> p.severity() == SpecProblem.Severity.ERROR).singleElement()
                .satisfies(p -> {
                    assertThat(p.field()).isEqualTo("external_state_joiners./ledger.external_state_joiner_class_name");
                    assertThat(p.message()).contains("static-table joiner '/ledger' needs a StaticTableProvider");
                });
    }

    @Test
    void shouldRejectOneNameInTwoMaps() {
        assertThat(loadErrors(enricher("\"external_state_joiners\": {\"/t\": {\"external_state_joiner_class_name\": "
                + "\"TSimpleExternalStateJoiner\", \"parameters\": {\"topic\": \"t\", \"schema\": " + ROW + "}}},"
                + "\"state_joiners\": {\"/t\": {\"computation_id\": \"x\", \"state_name\": \"s\"}}")))
                .singleElement().satisfies(p -> {
                    assertThat(p.field()).isEqualTo("state_joiners./t");
                    assertThat(p.message()).contains("declared in both external_state_joiners and state_joiners");
                });
    }

    @Test
    void shouldRejectMalformedCacheTtlAndVersioned() {
        List<SpecProblem> errors = loadErrors(enricher("\"external_state_joiners\": {\"/p\": {"
                + "\"external_state_joiner_class_name\": \"TSimpleExternalStateJoiner\", \"parameters\": {"
                + "\"topic\": \"p\", \"schema\": " + ROW + ", \"cache\": {\"ttl\": \"soon\"}, \"versioned\": \"yes\"}}}"));
        assertThat(errors).extracting(SpecProblem::field).containsExactlyInAnyOrder(
                "external_state_joiners./p.parameters.versioned", "external_state_joiners./p.parameters.cache.ttl");
    }

    @Test
    void shouldRejectMissingClassNameAndStateJoinerFields() {
        List<SpecProblem> errors = loadErrors(enricher("\"external_state_managers\": {\"/m\": {\"parameters\": {"
                + "\"schema\": " + ROW + "}}}, \"state_joiners\": {\"/s\": {\"computation_id\": \"x\"}}"));
        assertThat(errors).extracting(SpecProblem::field).containsExactlyInAnyOrder(
                "external_state_managers./m.external_state_manager_class_name", "state_joiners./s.state_name");
        assertThat(errors).anySatisfy(p -> assertThat(p.fix()).contains("NYT::NFlow::TSimpleExternalStateManager"));
    }

    @Test
    @DisplayName("as in Flow, an unknown field is a warning naming the known ones")
    void shouldWarnAboutUnknownFieldsAndParameters() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(enricher("\"external_state_managers\": {\"/m\": {"
                + "\"external_state_manager_class_name\": \"TSimpleExternalStateManager\", \"paramters\": {}, "
                + "\"parameters\": {\"schema\": " + ROW + ", \"mount\": true}}},"
                + "\"state_joiners\": {\"/s\": {\"computation_id\": \"read_events\", \"state_name\": \"x\", "
                + "\"preload\": true, \"parameters\": {\"batch\": 1}}}"));
        assertThat(spec.warnings()).extracting(SpecProblem::field).containsExactly(
                "external_state_managers./m.paramters", "state_joiners./s.preload");
        assertThat(spec.allWarnings()).extracting(SpecProblem::field).contains(
                "external_state_managers./m.parameters.mount", "state_joiners./s.parameters.batch");
    }

    @Test
    @DisplayName("000: an auditor with only a visit stream: no input_stream_ids, no source_streams, group_by_schema "
            + "mandatory, finite=false")
    void shouldLoadAndAcceptVisitorOnlyAuditor() {
        PipelineSpec spec = PipelineSpecLoader.fromYaml("""
                name: shop
                computations:
                  auditor:
                    processing_function: %s
                    group_by_schema:
                      - {name: hash, type: uint64, expression: farm_hash(key)}
                      - {name: key, type: uint64}
                    external_state_managers:
                      /audit:
                        external_state_manager_class_name: TSimpleExternalStateManager
                        parameters:
                          topic: audit-table
                          schema: {type: record, name: Row, fields: [{name: value, type: string}]}
                    key_visitor_streams:
                      audit_iter: {external_names: [/audit], finite: false}
                """.formatted(NOOP));
        assertThat(spec.validate()).isEmpty();
        assertThat(spec.computations().get("auditor").externalStateManagers().get("/audit").tableTopic("shop"))
                .isEqualTo("audit-table");
    }
}
