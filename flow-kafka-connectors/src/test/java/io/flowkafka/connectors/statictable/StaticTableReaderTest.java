package io.flowkafka.connectors.statictable;

import static io.flowkafka.connectors.statictable.LocalTablesDirectoryTest.SCHEMA;
import static io.flowkafka.connectors.statictable.LocalTablesDirectoryTest.T0;
import static io.flowkafka.connectors.statictable.LocalTablesDirectoryTest.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link StaticTableReader}: row ranges across parts and blocks, counts and weights. */
class StaticTableReaderTest {
    @TempDir
    Path dir;

    private StaticTableReader table(int rows, long rowsPerPart, CodecFactory codec) throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).tableTimestamp(T0)
                .rowsPerPart(rowsPerPart).codec(codec).open()) {
            for (GenericRecord r : rows(rows)) {
                w.append(r);
            }
            w.publish();
        }
        return StaticTableReader.open(tables, "t");
    }

    private static List<Long> ids(TableRowIterator it) {
        List<Long> ids = new ArrayList<>();
        try (it) {
            it.forEachRemaining(r -> ids.add((Long) r.get("id")));
        }
        return ids;
    }

    @Test
    void shouldReadEveryRangeOfATableSpreadOverParts() throws IOException {
        StaticTableReader reader = table(23, 5, CodecFactory.nullCodec());
        for (long from = 0; from <= 23; from++) {
            for (long to = from; to <= 23; to++) {
                List<Long> expected = new ArrayList<>();
                for (long i = from; i < to; i++) {
                    expected.add(i);
                }
                assertThat(ids(reader.rows(from, to))).as("[%d, %d)", from, to).isEqualTo(expected);
            }
        }
    }

    @Test
    void shouldSkipWholeAvroBlocksInsideAPart() throws IOException {
        // 200k rows in one part: DataFileWriter cuts ~64 KB blocks, so the skip crosses many blocks.
        StaticTableReader reader = table(200_000, 1_000_000, CodecFactory.deflateCodec(1));
        assertThat(reader.attributes().parts()).hasSize(1);
        assertThat(ids(reader.rows(150_000, 150_003))).containsExactly(150_000L, 150_001L, 150_002L);
        assertThat(ids(reader.rows(199_999, 200_000))).containsExactly(199_999L);
    }

    @Test
    void shouldPassOverWholeBlocksByTheirHeadersWithoutInflatingThem() throws IOException {
        StaticTableReader reader = table(200_000, 1_000_000, CodecFactory.deflateCodec(1));
        TablePart part = reader.attributes().parts().get(0);
        SyncMark mark = part.markAtOrBefore(150_000);
        Path file = dir.resolve("t").resolve(part.name());
        // the second block after the mark, and the row after it
        long corrupt;
        long after;
        try (DataFileReader<GenericRecord> r = new DataFileReader<>(file.toFile(), new GenericDatumReader<>())) {
            r.seek(mark.position());
            long row = mark.row();
            for (int block = 0; block < 2; block++) {
                r.hasNext();
                row += r.getBlockCount();
                r.nextBlock();
            }
            corrupt = r.previousSync();
            r.hasNext();
            after = row + r.getBlockCount();
        }
        assertThat(after).as("a block within the part, before the row read").isLessThan(150_000);
        // break the compressed data of that block, past its header: inflating it fails
        byte[] bytes = Files.readAllBytes(file);
        for (int i = 40; i < 80; i++) {
            bytes[(int) corrupt + i] ^= 0x5a;
        }
        Files.write(file, bytes);
        StaticTableReader broken = StaticTableReader.open(LocalTablesDirectory.open(dir), "t");

        assertThat(ids(broken.rows(150_000, 150_003))).containsExactly(150_000L, 150_001L, 150_002L);
        assertThat(ids(broken.rows(after, after + 1))).containsExactly(after);
        assertThatThrownBy(() -> ids(broken.rows(mark.row(), 150_000))).as("reading through it fails")
                .hasRootCauseInstanceOf(ZipException.class);
    }

    @Test
    void shouldSeekBySyncMarksWithoutReadingTheBlocksBefore() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).rowsPerPart(1000).rowsPerSyncMark(100)
                .codec(CodecFactory.nullCodec()).open()) {
            for (GenericRecord r : rows(1000)) {
                w.append(r);
            }
            w.publish();
        }
        TablePart part = tables.attributes("t").parts().get(0);
        assertThat(part.syncMarks()).extracting(SyncMark::row).containsExactly(100L, 200L, 300L, 400L, 500L, 600L,
                700L, 800L, 900L);
        // Break the sync marker that ends the first 500 rows' last block: reading across it fails,
        // so a read from row 550 that succeeds did not read across it.
        SyncMark mark = part.markAtOrBefore(550);
        assertThat(mark.row()).isEqualTo(500);
        Path file = dir.resolve("t").resolve(part.name());
        byte[] bytes = Files.readAllBytes(file);
        for (int i = 1; i <= 16; i++) {
            bytes[(int) mark.position() - i] ^= 0x5a;
        }
        Files.write(file, bytes);
        StaticTableReader reader = StaticTableReader.open(tables, "t");
        assertThat(ids(reader.rows(550, 553))).containsExactly(550L, 551L, 552L);
        assertThatThrownBy(() -> ids(reader.rows(0, 1000))).hasRootCauseMessage("Invalid sync!");
    }

    @Test
    void shouldReportRowCountByteSizeAndDataWeight() throws IOException {
        StaticTableReader reader = table(10, 3, CodecFactory.nullCodec());
        assertThat(reader.rowCount()).isEqualTo(10);
        // id 0..9 zig-zag varint = 1 byte; name "row-i" = 1 length byte + 5 chars.
        assertThat(reader.dataWeight()).isEqualTo(10 * (1 + 1 + 5));
        assertThat(reader.byteSize()).isGreaterThan(reader.dataWeight());
    }

    @Test
    void shouldReadWithAReaderSchema() throws IOException {
        table(3, 2, CodecFactory.nullCodec());
        Schema idOnly = SchemaBuilder.record("Row").fields().requiredLong("id").endRecord();
        List<GenericRecord> rows = StaticTableReader.open(LocalTablesDirectory.open(dir), "t", idOnly).readAll();
        assertThat(rows).extracting(r -> r.getSchema().getFields().size()).containsOnly(1);
    }

    @Test
    void shouldEndARangeClosedEarly() throws IOException {
        StaticTableReader reader = table(10, 3, CodecFactory.nullCodec());
        TableRowIterator it = reader.rows(0, 10);
        assertThat(it.next().get("id")).isEqualTo(0L);
        it.close();
        assertThat(it.hasNext()).isFalse();
    }

    @Test
    void shouldRejectARangeOutsideTheTable() throws IOException {
        StaticTableReader reader = table(3, 2, CodecFactory.nullCodec());
        assertThatThrownBy(() -> reader.rows(2, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must lie within [0, 3)");
    }

    /** Replaces the first part's file with a valid Avro file of only its first {@code keep} rows: a cut copy. */
    private String cutFirstPart(StaticTableReader reader, int keep) throws IOException {
        String part = reader.attributes().parts().get(0).name();
        Path file = dir.resolve("t").resolve(part);
        try (DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<GenericRecord>(SCHEMA))) {
            w.create(SCHEMA, file.toFile());
            for (GenericRecord r : rows(keep)) {
                w.append(r);
            }
        }
        return part;
    }

    @Test
    void shouldRefuseAPartCutShorterThanItsAttributesInsteadOfReadingOnInTheNextPart() throws IOException {
        // before: the next part's rows were handed out as the cut rows (rows lost, others read twice)
        StaticTableReader reader = table(30, 10, CodecFactory.nullCodec());
        String part = cutFirstPart(reader, 6);
        List<Long> read = new ArrayList<>();
        assertThatThrownBy(() -> {
            try (TableRowIterator it = reader.rows(0, 30)) {
                it.forEachRemaining(r -> read.add((Long) r.get("id")));
            }
        }).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot read table t at row 6 (part " + part + ")")
                .hasMessageContaining("fewer rows than the table's attributes say (10)");
        assertThat(read).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThatThrownBy(() -> ids(reader.rows(8, 12))).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("at row 8 (part " + part + ")");
        assertThat(ids(reader.rows(10, 13))).containsExactly(10L, 11L, 12L);
    }

    @Test
    void shouldReportADamagedPartAsAnIoErrorNamingThePart() throws IOException {
        StaticTableReader reader = table(2_000, 10_000, CodecFactory.deflateCodec(1));
        String part = reader.attributes().parts().get(0).name();
        Path file = dir.resolve("t").resolve(part);
        byte[] bytes = Files.readAllBytes(file);
        for (int i = bytes.length / 2; i < bytes.length / 2 + 64; i++) {
            bytes[i] ^= (byte) 0x5a;
        }
        Files.write(file, bytes);
        assertThatThrownBy(reader::readAll).isInstanceOf(IOException.class)
                .hasMessageContaining("the part file is damaged");
        assertThatThrownBy(() -> ids(reader.rows(0, 2_000))).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot read table t at row 0 (part " + part + ")");
    }
}
