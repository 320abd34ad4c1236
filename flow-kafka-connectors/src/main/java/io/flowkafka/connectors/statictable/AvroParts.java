package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.file.SeekableFileInput;
import org.apache.avro.file.SeekableInput;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Counts an Avro object-container file block by block, without decoding a row; the counts of a file another tool wrote
 * (a table without a manifest) are kept, per path, size and modification time, so that a table is counted once per JVM,
 * not at each open (a schema check, a task moving, a restart of the task): counting inflates every block.
 */
final class AvroParts {
    record Counts(long rows, long encodedBytes) {
    }

    /** The part files kept: a few thousand small entries at most. */
    static final int KEPT = 4096;
    private static final Map<PartFile, Counts> COUNTED = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<PartFile, Counts> eldest) {
                    return size() > KEPT;
                }
            });
    private static final AtomicLong COUNTS_READ = new AtomicLong();

    /** A part file as it is now; {@code fileKey} (the inode, where the filesystem has one) tells a replaced file. */
    private record PartFile(Path path, long size, FileTime modified, @Nullable Object fileKey) {
    }

    private AvroParts() {
    }

    /** The counts of a part file, read once per path, size and modification time. */
    static Counts count(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        PartFile key = new PartFile(file.toAbsolutePath(), a.size(), a.lastModifiedTime(), a.fileKey());
        Counts kept = COUNTED.get(key);
        if (kept != null) {
            return kept;
        }
        Counts c;
        try (SeekableFileInput in = new SeekableFileInput(file.toFile())) {
            c = count(in);
        }
        COUNTED.put(key, c);
        return c;
    }

    /** How many files {@link #count(Path)} read (for tests). */
    static long countsRead() {
        return COUNTS_READ.get();
    }

    /** Rows and uncompressed encoded bytes of a part, read block by block. */
    static Counts count(SeekableInput in) throws IOException {
        COUNTS_READ.incrementAndGet();
        long rows = 0;
        long bytes = 0;
        try (DataFileReader<GenericRecord> reader = new DataFileReader<>(in, new GenericDatumReader<>())) {
            while (reader.hasNext()) {
                rows += reader.getBlockCount();
                ByteBuffer block = reader.nextBlock();
                bytes += block.remaining();
            }
        }
        return new Counts(rows, bytes);
    }
}
