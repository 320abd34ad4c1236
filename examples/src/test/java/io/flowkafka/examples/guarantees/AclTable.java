package io.flowkafka.examples.guarantees;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.acl.AclOperation;

/**
 * The principal's ACL table of {@code docs/operations.md} ("Topics and ACLs", the {@code | resource | operations |}
 * table), read literally: one {@link Row} per table row, its operations parsed into Kafka's {@link AclOperation}s.
 * The rule it keeps: the security IT grants what the docs say, so a wrong or missing row fails that IT.
 */
final class AclTable {
    private static final Pattern PARENTHESES = Pattern.compile("\\([^)]*\\)");
    private static final Pattern CAMEL = Pattern.compile("(?<=[a-z])(?=[A-Z])");

    /** A row: its resource and operations cells as written. */
    record Row(String resource, String operationsCell) {
        /** The operations cell parsed; throws if it names something that is no Kafka ACL operation. */
        Set<AclOperation> operations() {
            return AclTable.operations(resource, operationsCell);
        }

        @Override
        public String toString() {
            return resource;
        }
    }

    private AclTable() {
    }

    /**
     * System property naming another markdown file holding the section, to check a proposed table before it goes
     * into the docs.
     */
    static final String TABLE_PROPERTY = "flow.security.acl.table";

    /**
     * The rows of the table in {@code docs/operations.md}, from the module directory or the repository root, or in
     * the file {@value #TABLE_PROPERTY} names.
     */
    static List<Row> fromDocs() throws IOException {
        String other = System.getProperty(TABLE_PROPERTY);
        Path docs = other != null ? Path.of(other) : Path.of("..", "docs", "operations.md");
        if (other == null && !Files.exists(docs)) {
            docs = Path.of("docs", "operations.md");
        }
        return parse(Files.readString(docs));
    }

    static List<Row> parse(String markdown) {
        int section = markdown.indexOf("## Topics and ACLs");
        if (section < 0) {
            throw new IllegalArgumentException("docs/operations.md has no section '## Topics and ACLs'");
        }
        String[] lines = markdown.substring(section).split("\n");
        List<Row> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : lines) {
            String l = line.strip();
            if (l.replace(" ", "").equals("|resource|operations|")) {
                inTable = true;
                continue;
            }
            if (!inTable || l.startsWith("|---")) {
                continue;
            }
            if (!l.startsWith("|")) {
                break;
            }
            String[] cells = l.substring(1, l.length() - 1).split("\\|");
            if (cells.length != 2) {
                throw new IllegalArgumentException("ACL table row without two cells: " + l);
            }
            rows.add(new Row(cells[0].strip(), cells[1].strip()));
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("docs/operations.md has no '| resource | operations |' table");
        }
        return rows;
    }

    /**
     * "Create (unless `check` mode), Describe, Read" to {CREATE, DESCRIBE, READ}: notes in parentheses dropped, each
     * name Kafka's ACL operation name ({@code kafka-acls --operation}).
     */
    static Set<AclOperation> operations(String resource, String cell) {
        Set<AclOperation> ops = new LinkedHashSet<>();
        for (String name : PARENTHESES.matcher(cell).replaceAll("").split(",")) {
            String n = name.strip();
            AclOperation op = AclOperation.fromString(CAMEL.matcher(n).replaceAll("_").toUpperCase(Locale.ROOT));
            if (op == AclOperation.UNKNOWN || op == AclOperation.ANY) {
                throw new IllegalArgumentException("the ACL table's row '" + resource + "' names '" + n
                        + "', which is no Kafka ACL operation (" + Set.of(AclOperation.values()) + ")");
            }
            ops.add(requireNonNull(op));
        }
        return ops;
    }
}
