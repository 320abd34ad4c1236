package io.flowkafka.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import org.jspecify.annotations.Nullable;

/** Deletes the temporary directories the test kit creates (state directories). */
final class TempDirs {
    private TempDirs() {
    }

    /**
     * Deletes {@code dir} and everything below it; nothing if it is null or gone.
     *
     * @param what names the directory in the error, e.g. "FlowTestDriver's state.dir"
     * @throws UncheckedIOException if something cannot be deleted
     */
    static void deleteRecursively(@Nullable Path dir, String what) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, @Nullable IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + what + " " + dir, e);
        }
    }
}
