package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The input system watermark of an arrival-order sink, shared by every instance through the output directory: each
 * task partition's latest watermark, reported after the commit of the epoch that reached it, is kept in
 * {@code .staging/.watermarks/<partition>}; their minimum is "the system watermark of the input stream". It is
 * unknown while a partition of the input has never reported, so the partitions may be spread over several instances
 * and an instance that runs none of them still publishes with it. A partition's file keeps its highest report, also
 * across owners: what a committed epoch reached stays true.
 *
 * <p>Thread-safe: reported on the stream threads, read on the publishing timer's.
 */
final class InputWatermark {
    /** At most one write of a partition's file per this many ms (a completed input is written at once). */
    static final long MIN_WRITE_INTERVAL_MS = 1_000;
    private static final Logger LOG = LoggerFactory.getLogger(InputWatermark.class);

    private final Path dir;
    /** Per partition: {highest reported, highest written, last write ms, partition count}. */
    private final Map<Integer, long[]> reported = new ConcurrentHashMap<>();

    InputWatermark(Path dir) {
        this.dir = dir;
    }

    /** A partition's watermark, in nanoseconds; written to its file when it advanced and the interval passed. */
    void update(int partition, long systemWatermarkNs, int partitionCount) {
        long[] r = reported.computeIfAbsent(partition, p -> new long[] {Long.MIN_VALUE, Long.MIN_VALUE, 0, 0});
        r[0] = Math.max(r[0], systemWatermarkNs);
        r[3] = partitionCount;
        long now = System.currentTimeMillis();
        if (r[0] > r[1] && (now - r[2] >= MIN_WRITE_INTERVAL_MS || r[0] == Long.MAX_VALUE)) {
            try {
                write(partition, r[0], partitionCount);
                r[1] = r[0];
                r[2] = now;
            } catch (IOException e) {
                LOG.warn("the input watermark of partition {} could not be written to {} (retried at its next "
                        + "report): {}", partition, dir, e.toString());
            }
        }
    }

    private void write(int partition, long ns, int partitionCount) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(Integer.toString(partition));
        Long before = read(file);
        if (before != null && before >= ns) {
            return; // an owner before this one got further
        }
        Path tmp = dir.resolve(".tmp-" + UUID.randomUUID());
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap((ns + " " + partitionCount).getBytes(StandardCharsets.US_ASCII)));
                ch.force(true); // durable before the rename: a crash leaves the old value or the new, never none
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            StagingPool.forceDirectory(dir);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** A partition file's watermark; null if there is none, or it is unreadable (the next write replaces it). */
    private static @Nullable Long read(Path file) throws IOException {
        try {
            long[] value = parse(file, Files.readString(file, StandardCharsets.US_ASCII));
            return value == null ? null : value[0];
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** {watermark, partition count} of a partition file's text; null if torn (then the partition counts as unknown). */
    private static long @Nullable [] parse(Path file, String text) {
        String[] parts = text.trim().split(" ");
        try {
            return new long[] {Long.parseLong(parts[0]), Integer.parseInt(parts[1])};
        } catch (RuntimeException e) {
            LOG.warn("unreadable input watermark file {} ({}): its partition counts as unknown until it reports "
                    + "again", file, e.toString());
            return null;
        }
    }

    /**
     * The minimum over the input's partitions, as the directory and this instance know them.
     *
     * @return the watermark, or null while a partition's is unknown
     */
    @Nullable Instant current() throws IOException {
        Map<Integer, Long> known = new HashMap<>();
        int count = 0;
        for (Map.Entry<Integer, long[]> e : reported.entrySet()) {
            known.merge(e.getKey(), e.getValue()[0], Math::max);
            count = Math.max(count, (int) e.getValue()[3]);
        }
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                    long[] value;
                    try {
                        value = parse(f, Files.readString(f, StandardCharsets.US_ASCII));
                    } catch (NoSuchFileException e) {
                        continue;
                    }
                    if (value != null) {
                        known.merge(Integer.parseInt(f.getFileName().toString()), value[0], Math::max);
                        count = Math.max(count, (int) value[1]);
                    }
                }
            }
        }
        if (count <= 0) {
            return null;
        }
        long min = Long.MAX_VALUE;
        for (int p = 0; p < count; p++) {
            Long w = known.get(p);
            if (w == null) {
                return null;
            }
            min = Math.min(min, w);
        }
        return Instant.EPOCH.plusNanos(min);
    }
}
