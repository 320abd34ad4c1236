package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Deque;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Empty staging files created ahead, per task partition, {@value #SIZE} at a time with one fsync of the directory:
 * an epoch writes its rows into one and fsyncs only that file, since its directory entry is already durable. A file
 * of the pool is named {@code .pool-<partition>-<uuid>.avro}: hidden, so no listing takes it; once its epoch
 * committed it is renamed to its staged name ({@link StagingArea#complete}).
 *
 * <p>Threading: {@link #take} and {@link #release} of one partition on one thread at a time.
 */
final class StagingPool {
    static final int SIZE = 16;
    private static final Pattern NAME = Pattern.compile("\\.pool-(\\d+)-[0-9a-f-]+\\.avro");

    private final Path staging;
    private final Map<Integer, Deque<Path>> free = new ConcurrentHashMap<>();
    /**
     * Files this pool created that no listing has taken complete yet: a file is added before it exists, so a listing
     * that sees it knows it is this instance's (unused, being written, or complete but not counted yet).
     */
    private final Set<Path> ours = ConcurrentHashMap.newKeySet();

    StagingPool(Path staging) {
        this.staging = staging;
    }

    /** An empty file of the partition whose directory entry is durable; the caller fills it or deletes it. */
    Path take(int partition) throws IOException {
        Deque<Path> files = free.computeIfAbsent(partition, p -> new ConcurrentLinkedDeque<>());
        if (files.isEmpty()) {
            for (int i = 0; i < SIZE; i++) {
                Path f = staging.resolve(".pool-" + partition + "-" + UUID.randomUUID() + ".avro");
                ours.add(f);
                Files.createFile(f);
                files.add(f);
            }
            forceDirectory(staging);
        }
        return files.poll();
    }

    /** Whether the file is one of the partition's unused files. */
    boolean free(int partition, Path file) {
        Deque<Path> files = free.get(partition);
        return files != null && files.contains(file);
    }

    /** A staged file this instance is about to make visible: listings skip it until it is counted complete. */
    void claim(Path file) {
        ours.add(file);
    }

    /**
     * Whether this pool created the file and {@link #forget} was not called for it: unused, being written, or
     * complete but not listed yet.
     */
    boolean created(Path file) {
        return ours.contains(file);
    }

    /** The file was deleted, or a listing took it complete: from now on it is read as anyone's. */
    void forget(Path file) {
        ours.remove(file);
    }

    /** The partition of a pool file's name, or -1 for another name. */
    static int partitionOf(Path file) {
        Matcher m = NAME.matcher(file.getFileName().toString());
        return m.matches() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** Deletes the partition's unused files. */
    void release(int partition) throws IOException {
        Deque<Path> files = free.remove(partition);
        if (files != null) {
            for (Path f : files) {
                Files.deleteIfExists(f);
                ours.remove(f);
            }
        }
    }

    static void forceDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // some platforms cannot fsync a directory; the rename is still atomic
        }
    }
}
