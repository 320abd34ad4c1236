package io.flowkafka.connectors.statictable;

import static io.flowkafka.connectors.statictable.LocalTablesDirectoryTest.SCHEMA;
import static io.flowkafka.connectors.statictable.LocalTablesDirectoryTest.rows;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TableTimestampLocator}. Reference 001, "Reload semantics": "The controller picks the latest
 * version according to the rules defined in TTableTimestampLocatorSpec ... most often, this is the
 * newest table in the directory whose name parses as an ISO8601 timestamp."
 */
class TableTimestampLocatorTest {
    @TempDir
    Path dir;

    @Test
    void shouldParseIso8601TableNames() {
        assertThat(TableTimestampLocator.parseIso8601("2026-12-03T10:00:00Z"))
                .contains(Instant.parse("2026-12-03T10:00:00Z"));
        assertThat(TableTimestampLocator.parseIso8601("2026-12-03T13:00:00+03:00"))
                .contains(Instant.parse("2026-12-03T10:00:00Z"));
        assertThat(TableTimestampLocator.parseIso8601("2026-12-03T10:00:00.250"))
                .contains(Instant.parse("2026-12-03T10:00:00.250Z"));
        assertThat(TableTimestampLocator.parseIso8601("2026-12-03T10:00"))
                .contains(Instant.parse("2026-12-03T10:00:00Z"));
        assertThat(TableTimestampLocator.parseIso8601("2026-12-03")).contains(Instant.parse("2026-12-03T00:00:00Z"));
        assertThat(TableTimestampLocator.parseIso8601("reference.v2")).isEmpty();
        assertThat(TableTimestampLocator.parseIso8601("2026-13-03")).isEmpty();
    }

    @Test
    void shouldPickTheNewestTableWhoseNameParsesAsIso8601() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        // Name order differs from time order: the offset form sorts first but is the newest.
        for (String name : List.of("2026-12-03T09:00:00Z", "2026-12-03T12:30:00+03:00", "2026-12-02", "zzz-latest")) {
            StaticTableWriter.write(tables, name, SCHEMA, null, rows(1));
        }
        TableTimestampLocator locator = TableTimestampLocator.iso8601Names();
        assertThat(locator.latest(tables)).contains(new LocatedTable("2026-12-03T12:30:00+03:00",
                Instant.parse("2026-12-03T09:30:00Z")));
        assertThat(locator.inOrder(tables)).extracting(LocatedTable::name).containsExactly("2026-12-02",
                "2026-12-03T09:00:00Z", "2026-12-03T12:30:00+03:00");
    }

    @Test
    void shouldLocateNothingInADirectoryWithoutIso8601Names() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "current", SCHEMA, Instant.EPOCH, rows(1));
        assertThat(TableTimestampLocator.iso8601Names().latest(tables)).isEmpty();
    }

    @Test
    void shouldLocateByTheTableTimestampAttribute() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "b", SCHEMA, Instant.parse("2026-01-01T00:00:00Z"), rows(1));
        StaticTableWriter.write(tables, "a", SCHEMA, Instant.parse("2026-02-01T00:00:00Z"), rows(1));
        StaticTableWriter.write(tables, "c", SCHEMA, null, rows(1));
        TableTimestampLocator locator = TableTimestampLocator.of(TableTimestampLocator.Source.ATTRIBUTE, null);
        assertThat(locator.inOrder(tables)).extracting(LocatedTable::name).containsExactly("b", "a");
    }

    @Test
    void shouldApplyTheTableNameFilterFirst() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "2026-12-01", SCHEMA, null, rows(1));
        StaticTableWriter.write(tables, "2026-12-03T00:00:00Z", SCHEMA, null, rows(1));
        TableTimestampLocator locator = TableTimestampLocator.of(TableTimestampLocator.Source.NAME,
                "\\d{4}-\\d{2}-\\d{2}");
        assertThat(locator.latest(tables)).map(LocatedTable::name).contains("2026-12-01");
    }
}
