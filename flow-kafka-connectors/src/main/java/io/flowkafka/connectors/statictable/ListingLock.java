package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps a listing of {@code .staging/} apart from the renames that make staged files visible, across instances: a
 * directory listing may miss a file renamed while it runs and still see one renamed after it, so a publisher could
 * take a partition's later epoch without the earlier one, and the table's frontier would then cover the earlier one.
 * Renames hold the lock file {@code .listing-lock} shared, listings exclusive; within one JVM both also take a lock
 * of their own (a JVM may hold a file's lock only once).
 */
final class ListingLock {
    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    private final Path file;
    private final ReentrantLock jvm;

    ListingLock(Path staging) {
        this.file = staging.resolve(".listing-lock");
        this.jvm = JVM_LOCKS.computeIfAbsent(file.toAbsolutePath().normalize(), p -> new ReentrantLock());
    }

    /** Work done under the lock. */
    interface Work<T> {
        T run() throws IOException;
    }

    /** Runs a rename: other instances may rename meanwhile, nobody lists. */
    <T> T renaming(Work<T> work) throws IOException {
        return locked(true, work);
    }

    /** Runs a listing: nobody renames meanwhile. */
    <T> T listing(Work<T> work) throws IOException {
        return locked(false, work);
    }

    private <T> T locked(boolean shared, Work<T> work) throws IOException {
        jvm.lock();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE); FileLock ignored = ch.lock(0, Long.MAX_VALUE, shared)) {
            return work.run();
        } finally {
            jvm.unlock();
        }
    }
}
