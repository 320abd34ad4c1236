package io.flowkafka.connectors.statictable;

import java.nio.file.Path;
import java.time.Instant;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.generic.GenericRecord;

/**
 * A process that publishes tables {@code t-00000, t-00001, ...} into a directory until it is
 * killed, printing each name once published; {@link LocalTablesDirectoryCrashTest} kills it with
 * SIGKILL at an arbitrary point.
 */
final class CrashingTableWriter {
    private CrashingTableWriter() {
    }

    public static void main(String[] args) throws Exception {
        LocalTablesDirectory tables = LocalTablesDirectory.open(Path.of(args[0]));
        for (int t = 0; ; t++) {
            String name = String.format("t-%05d", t);
            try (StaticTableWriter w = StaticTableWriter.builder(tables, name, LocalTablesDirectoryTest.SCHEMA)
                    .tableTimestamp(Instant.EPOCH.plusSeconds(t)).rowsPerPart(500).rowsPerSyncMark(100)
                    .codec(CodecFactory.nullCodec()).open()) {
                for (GenericRecord r : LocalTablesDirectoryTest.rows(2_000 + t % 7)) {
                    w.append(r);
                }
                w.publish();
            }
            System.out.println(name);
            System.out.flush();
        }
    }
}
