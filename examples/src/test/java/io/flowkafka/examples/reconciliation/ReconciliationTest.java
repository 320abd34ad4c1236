package io.flowkafka.examples.reconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.connectors.statictable.TablesDirectory;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReconciliationPipeline} on {@link FlowTestDriver}, quoting reference 000, "Static table joiner".
 */
class ReconciliationTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHANGES = "changes";
    @TempDir
    Path tables;
    private FlowTestDriver driver;

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no call failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    private void start(int partitions) {
        driver = FlowTestDriver.create(spec(partitions));
    }

    private PipelineSpec spec(int partitions) {
        return ReconciliationPipeline.spec("recon", "accounts", CHANGES, tables.toString(), Duration.ofSeconds(10),
                partitions);
    }

    private void account(String account, long balance) {
        driver.pipeSource("accounts", account, "{\"account\":\"" + account + "\",\"balance\":" + balance + "}");
    }

    private GenericRecord row(String account, long balance) {
        GenericRecord r = new GenericData.Record(ReconciliationPipeline.LEDGER_SCHEMA);
        r.put("hash", driver.key(ReconciliationPipeline.RECONCILE, Map.of("account", account)).get("hash"));
        r.put("account", account);
        r.put("balance", balance);
        return r;
    }

    private void ledger(String table, GenericRecord... rows) throws IOException {
        ReconciliationPipeline.writeLedger(LocalTablesDirectory.open(tables), table, List.of(rows));
    }

    private void pass() {
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100));
    }

    private List<String> changes() {
        List<String> out = new ArrayList<>();
        for (String s : driver.readSinkJson(CHANGES)) {
            try {
                JsonNode n = JSON.readTree(s);
                out.add(n.get("account").asText() + " " + n.get("action").asText() + " " + n.get("balance").asLong());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    private Long balance(String account) {
        return driver.state(ReconciliationPipeline.RECONCILE, ReconciliationPipeline.ACCOUNT,
                Map.of("account", account)).map(r -> (Long) r.get("balance")).orElse(null);
    }

    private List<StatusError> visitorErrors() {
        return driver.status().stream().filter(e -> e.path().contains("key_visitor")).toList();
    }

    @Test
    void shouldUpdateKeysInTheTableAndDeleteKeysMissingFromIt() throws IOException {
        // "a periodic scan aligns the computation's own state with the external table—keys present in the table are
        // updated, and keys missing from it are deleted."
        start(2);
        account("ann", 1);
        account("bob", 2);
        account("cid", 3);
        ledger("2026-12-01T00:00:00Z", row("ann", 10), row("cid", 3), row("dan", 4), row("eve", 5));
        pass();
        // "Table keys take part in the scan on an equal footing with state keys: a visit arrives even for a key that
        // isn't yet in the computation's own state." (dan, eve)
        assertThat(changes()).containsExactlyInAnyOrder("ann updated 10", "bob deleted 2", "dan updated 4",
                "eve updated 5");
        assertThat(balance("ann")).isEqualTo(10L);
        assertThat(balance("bob")).isNull();
        assertThat(balance("cid")).isEqualTo(3L);
        assertThat(balance("dan")).isEqualTo(4L);
        pass();
        assertThat(changes()).as("aligned: the next pass changes nothing").isEmpty();
        assertThat(visitorErrors()).isEmpty();
    }

    @Test
    void shouldReadTheNewestTableFromTheNextPassOn() throws IOException {
        start(1);
        ledger("2026-12-01T00:00:00Z", row("ann", 1), row("bob", 2));
        pass();
        assertThat(changes()).containsExactlyInAnyOrder("ann updated 1", "bob updated 2");
        ledger("2026-12-02T00:00:00Z", row("bob", 20), row("cid", 3));
        pass();
        pass();
        assertThat(changes()).containsExactlyInAnyOrder("ann deleted 1", "bob updated 20", "cid updated 3");
    }

    @Test
    void shouldReportAnUnavailableTableInTheStatusAndRetry() throws IOException {
        // Reference 000, Diagnostics: "an error is reported to /key_visitor/<stream>/background_fill, and the read is
        // automatically retried. [...] a persistent issue (schema mismatch, missing table) remains visible in the
        // status and doesn't break the pipeline."
        start(1);
        account("ann", 1);
        pass();
        assertThat(visitorErrors()).anySatisfy(e -> {
            assertThat(e.path()).isEqualTo("/key_visitor/" + ReconciliationPipeline.VISITOR + "/background_fill");
            assertThat(e.message()).contains("static table of joiner '/ledger' is unavailable");
        });
        assertThat(balance("ann")).as("no visit without the table: nothing is deleted").isEqualTo(1L);
        ledger("2026-12-01T00:00:00Z", row("ann", 5));
        pass();
        assertThat(changes()).containsExactly("ann updated 5");
        assertThat(visitorErrors()).as("the error clears once the read succeeds").isEmpty();
    }

    @Test
    void shouldReportATableNotStrictlySortedAsAStatusError() throws IOException {
        // "The table must be strictly sorted by the computation's group_by_schema"
        start(1);
        account("ann", 1);
        GenericRecord a = row("ann", 1);
        GenericRecord b = row("bob", 2);
        boolean annFirst = Long.compareUnsigned((Long) a.get("hash"), (Long) b.get("hash")) < 0;
        StaticTableWriter.write(LocalTablesDirectory.open(tables), "2026-12-01T00:00:00Z",
                ReconciliationPipeline.LEDGER_SCHEMA, null, annFirst ? List.of(b, a) : List.of(a, b));
        pass();
        assertThat(visitorErrors()).anySatisfy(e -> assertThat(e.message())
                .contains("is not strictly sorted by the computation's group_by_schema [hash, account]"));
        assertThat(balance("ann")).isEqualTo(1L);
    }

    @Test
    void shouldRejectATableWhoseKeyPrefixDiffersAtSubmit() throws IOException {
        // "the prefix of its key columns must match that schema in names and types" (checked at submit when the
        // table exists)
        Schema wrong = SchemaBuilder.record("Wrong").fields().requiredString("account").requiredLong("hash")
                .endRecord();
        TablesDirectory dir = LocalTablesDirectory.open(tables);
        GenericRecord r = new GenericData.Record(wrong);
        r.put("account", "ann");
        r.put("hash", 1L);
        StaticTableWriter.write(dir, "2026-12-01T00:00:00Z", wrong, null, List.of(r));
        List<SpecProblem> errors = spec(1).validate().stream()
                .filter(p -> p.severity() == SpecProblem.Severity.ERROR).toList();
        assertThat(errors).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("external_state_joiners./ledger");
            assertThat(p.message()).contains("key schema mismatch", "column 0 is 'account' string");
            assertThat(p.fix()).contains("[hash uint64 = farm_hash(account), account string]");
        });
    }
}
