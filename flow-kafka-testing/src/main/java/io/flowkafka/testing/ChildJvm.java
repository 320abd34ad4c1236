package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A Java application running in a child process, for tests that must kill it: crash recovery,
 * zombie fencing, exactly-once under {@code SIGKILL}.
 *
 * <p>The child runs the given main class on this JVM's class path
 * ({@code java.class.path}) with the {@code java} of {@code java.home}. Its standard output and
 * error both go to {@link #logFile()}, by default under {@code target/child-jvms/}. Its standard
 * input stays open, as a pipe from this JVM, until the child stops; a child that reads it to its
 * end, such as {@code EmbeddedKafkaCluster}'s {@code main}, therefore exits when this JVM dies.
 *
 * <p>Unless the builder sets {@code java.io.tmpdir}, the child gets a temporary directory of its own as
 * {@code java.io.tmpdir}, which {@link #close()} deletes: what a killed child cannot delete itself (RocksDB
 * extracts its 15 MB native library there on every start) does not pile up in the system's. A child that keeps
 * state across restarts must therefore set its {@code state.dir} (Kafka Streams' default is under
 * {@code java.io.tmpdir}).
 *
 * <pre>{@code
 * try (ChildJvm app = ChildJvm.builder(MyApp.class).arg(cluster.bootstrapServers())
 *         .maxHeap("256m").start()) {
 *     app.awaitOutputLine(line -> line.contains("RUNNING"), Duration.ofSeconds(30));
 *     app.kill();
 * }
 * }</pre>
 *
 * <p>Thread-safe. The caller closes it, which kills the child if it still runs.
 */
public final class ChildJvm implements AutoCloseable {
    /** How long {@link #stop()} waits for the child to exit after {@code SIGTERM}. */
    public static final Duration DEFAULT_STOP_BOUND = Duration.ofSeconds(30);

    private static final Duration KILL_BOUND = Duration.ofSeconds(30);
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final int TAIL_LINES = 20;

    private final Process process;
    private final Path logFile;
    private final String mainClass;
    private final @Nullable Path ownTempDir;

    private ChildJvm(Process process, Path logFile, String mainClass, @Nullable Path ownTempDir) {
        this.process = process;
        this.logFile = logFile;
        this.mainClass = mainClass;
        this.ownTempDir = ownTempDir;
    }

    /**
     * Starts describing a child that runs {@code mainClass}.
     *
     * @param mainClass a class with a {@code public static void main(String[])} on this JVM's class
     *     path
     * @return a builder; call {@link Builder#start()} to launch the child
     */
    public static Builder builder(Class<?> mainClass) {
        return builder(Objects.requireNonNull(mainClass, "mainClass").getName());
    }

    /**
     * Starts describing a child that runs the class named {@code mainClass}.
     *
     * @param mainClass a fully qualified class name
     * @return a builder; call {@link Builder#start()} to launch the child
     * @throws IllegalArgumentException if {@code mainClass} is blank
     */
    public static Builder builder(String mainClass) {
        Objects.requireNonNull(mainClass, "mainClass");
        if (mainClass.isBlank()) {
            throw new IllegalArgumentException("mainClass must not be blank");
        }
        return new Builder(mainClass);
    }

    /**
     * Describes a child JVM; {@link #start()} launches it.
     *
     * <p>Not thread-safe. {@link #start()} does not change the builder and may be called again to
     * launch another child, which needs a different {@link #logFile(Path)} if one was set.
     */
    public static final class Builder {
        private static final Pattern HEAP = Pattern.compile("[1-9][0-9]*[kKmMgG]?");

        private final String mainClass;
        private final List<String> args = new ArrayList<>();
        private final List<String> jvmArgs = new ArrayList<>();
        private final Map<String, String> systemProperties = new LinkedHashMap<>();
        private final Map<String, String> environment = new LinkedHashMap<>();
        private @Nullable String maxHeap;
        private @Nullable Path logFile;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
        }

        /**
         * Appends one program argument.
         *
         * @param arg the argument
         * @return this builder
         */
        public Builder arg(String arg) {
            args.add(Objects.requireNonNull(arg, "arg"));
            return this;
        }

        /**
         * Appends program arguments.
         *
         * @param args the arguments, in order
         * @return this builder
         */
        public Builder args(String... args) {
            for (String arg : args) {
                arg(arg);
            }
            return this;
        }

        /**
         * Sets a system property in the child, as {@code -Dkey=value}.
         *
         * @param key the property's name
         * @param value the property's value
         * @return this builder
         * @throws IllegalArgumentException if {@code key} is empty
         * @throws IllegalStateException if {@code key} is already set
         */
        public Builder systemProperty(String key, String value) {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
            if (key.isEmpty()) {
                throw new IllegalArgumentException("system property key must not be empty");
            }
            if (systemProperties.putIfAbsent(key, value) != null) {
                throw new IllegalStateException("system property " + key + " is already set to "
                        + systemProperties.get(key));
            }
            return this;
        }

        /**
         * Sets an environment variable in the child, on top of this JVM's environment (e.g. a secret a spec reads
         * with {@code {env: NAME}}).
         *
         * @param name the variable's name
         * @param value its value
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is empty
         * @throws IllegalStateException if {@code name} is already set
         */
        public Builder environment(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            if (name.isEmpty()) {
                throw new IllegalArgumentException("environment variable name must not be empty");
            }
            if (environment.putIfAbsent(name, value) != null) {
                throw new IllegalStateException("environment variable " + name + " is already set");
            }
            return this;
        }

        /**
         * Sets the child's maximum heap, as {@code -Xmx}; by default the JVM chooses.
         *
         * @param size such as {@code "256m"} or {@code "1g"}
         * @return this builder
         * @throws IllegalArgumentException if {@code size} is not a number with an optional
         *     k, m or g unit
         * @throws IllegalStateException if the heap is already set
         */
        public Builder maxHeap(String size) {
            Objects.requireNonNull(size, "size");
            if (!HEAP.matcher(size).matches()) {
                throw new IllegalArgumentException("maxHeap must look like 256m or 1g but was '"
                        + size + "'");
            }
            if (maxHeap != null) {
                throw new IllegalStateException("maxHeap is already set to " + maxHeap);
            }
            maxHeap = size;
            return this;
        }

        /**
         * Appends a raw JVM option, such as {@code -XX:+UseSerialGC}.
         *
         * @param option the JVM option, passed as is
         * @return this builder
         */
        public Builder jvmArg(String option) {
            jvmArgs.add(Objects.requireNonNull(option, "option"));
            return this;
        }

        /**
         * Sets the file that receives the child's output, replacing its content; by default a new
         * file under {@code target/child-jvms/} named after the main class.
         *
         * @param file the log file; its content is replaced when the child starts
         * @return this builder
         * @throws IllegalStateException if the log file is already set
         */
        public Builder logFile(Path file) {
            Objects.requireNonNull(file, "file");
            if (logFile != null) {
                throw new IllegalStateException("logFile is already set to " + logFile);
            }
            logFile = file;
            return this;
        }

        /**
         * Launches the child; does not wait for it to do anything.
         *
         * @return the running child, which the caller closes
         * @throws UncheckedIOException if the log file cannot be created or the process cannot
         *     start
         */
        public ChildJvm start() {
            Path log = logFile != null ? logFile : defaultLogFile(mainClass);
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            if (maxHeap != null) {
                command.add("-Xmx" + maxHeap);
            }
            systemProperties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.addAll(jvmArgs);
            Path ownTempDir = null;
            boolean started = false;
            try {
                if (!setsTempDir()) {
                    ownTempDir = Files.createTempDirectory("flow-child-jvm-");
                    command.add("-Djava.io.tmpdir=" + ownTempDir);
                }
                command.add("-cp");
                command.add(System.getProperty("java.class.path"));
                command.add(mainClass);
                command.addAll(args);
                Path parent = log.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                ProcessBuilder builder = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile());
                builder.environment().putAll(environment);
                Process process = builder.start();
                started = true;
                return new ChildJvm(process, log, mainClass, ownTempDir);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start a child JVM running " + mainClass
                        + " with output to " + log, e);
            } finally {
                if (!started) {
                    TempDirs.deleteRecursively(ownTempDir, "a child JVM's java.io.tmpdir");
                }
            }
        }

        /**
         * Launches the child and waits until it prints a line that {@code matcher} accepts (see
         * {@link ChildJvm#awaitOutputLine}), e.g. a pipeline's {@code RUNNING}; if it does not, closes the child
         * (kills it, deletes its temporary directory) before the error propagates, so that a failed start leaves
         * no process behind to disturb later tests.
         *
         * @param matcher accepts the awaited output line
         * @param bound how long to wait for the line
         * @return the running child, which the caller closes
         * @throws AssertionError if no line matches within {@code bound}, or the child exits first
         */
        public ChildJvm startAndAwaitOutputLine(Predicate<String> matcher, Duration bound) {
            ChildJvm child = start();
            try {
                child.awaitOutputLine(matcher, bound);
                return child;
            } catch (RuntimeException | Error e) {
                try {
                    child.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
        }

        private boolean setsTempDir() {
            return systemProperties.containsKey("java.io.tmpdir")
                    || jvmArgs.stream().anyMatch(a -> a.startsWith("-Djava.io.tmpdir="));
        }

        private static Path defaultLogFile(String mainClass) {
            String simple = mainClass.substring(mainClass.lastIndexOf('.') + 1);
            return Path.of("target", "child-jvms", simple + "-" + ProcessHandle.current().pid()
                    + "-" + COUNTER.incrementAndGet() + ".log");
        }
    }

    /**
     * The file that receives the child's standard output and error.
     *
     * @return the log file's path
     */
    public Path logFile() {
        return logFile;
    }

    /**
     * The child's process id.
     *
     * @return the operating-system process id
     */
    public long pid() {
        return process.pid();
    }

    /**
     * Whether the child still runs.
     *
     * @return true while the child process is alive
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * The child's exit code, or empty while it runs; 137 after {@link #kill()} on Linux.
     *
     * @return the exit code, or empty while the child runs
     */
    public OptionalInt exitCode() {
        return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    /**
     * Kills the child with {@code SIGKILL}, giving it no chance to clean up, and waits until it
     * has exited. Does nothing if it has already exited.
     *
     * @throws FlowException if the child is still alive after 30 s, or if interrupted
     */
    public void kill() {
        process.destroyForcibly();
        waitFor(KILL_BOUND, "killed");
    }

    /**
     * Stops the child with {@code SIGTERM}, which runs its shutdown hooks, and waits up to
     * {@link #DEFAULT_STOP_BOUND}; kills it if it is still alive then.
     *
     * <p>This also closes the child's standard input, so a child that exits when its input ends
     * may exit normally before the signal takes effect.
     *
     * @return the exit code: 143 for a JVM that stopped on {@code SIGTERM}, 137 if it was killed,
     *     or whatever the child chose if it exited on its own
     * @throws FlowException if the child is still alive after the kill, or if interrupted
     */
    public int stop() {
        return stop(DEFAULT_STOP_BOUND);
    }

    /**
     * Stops the child with {@code SIGTERM} and waits up to {@code bound}; kills it if it is still
     * alive then. Closes the child's standard input, as {@link #stop()} does.
     *
     * @param bound how long to wait for a clean exit
     * @return the exit code
     * @throws FlowException if the child is still alive after the kill, or if interrupted
     */
    public int stop(Duration bound) {
        Objects.requireNonNull(bound, "bound");
        process.destroy();
        try {
            if (!process.waitFor(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while stopping child JVM " + this, e);
        }
        return process.exitValue();
    }

    /**
     * Waits until the child prints a line that {@code matcher} accepts, and returns that line.
     *
     * <p>Reads {@link #logFile()} from its start on each call, so a line printed before the call
     * counts.
     *
     * @param matcher tested against each line, without its line terminator
     * @param bound how long to wait; must be positive
     * @return the first matching line
     * @throws AssertionError if no line matches within {@code bound}, or if the child exits
     *     without printing one; the message names the log file and shows its last lines
     * @throws UncheckedIOException if the log file cannot be read
     */
    public String awaitOutputLine(Predicate<String> matcher, Duration bound) {
        Objects.requireNonNull(matcher, "matcher");
        LogTail tail = new LogTail();
        Optional<String> match = Await.poll(bound, "a matching line from " + this, () -> {
            boolean exited = !process.isAlive();
            Optional<String> found = tail.scan(matcher, exited);
            if (found.isEmpty() && exited) {
                throw new AssertionError(this + " exited with code " + process.exitValue()
                        + " before printing a matching line; its last lines:\n" + tail.last());
            }
            return found;
        }, Optional::isPresent, false,
                message -> new AssertionError(message + "; its last lines:\n" + tail.last()));
        return match.orElseThrow();
    }

    /**
     * Kills the child if it still runs (see {@link #kill()}), then deletes the temporary directory it was given
     * as {@code java.io.tmpdir}, if any.
     *
     * @throws UncheckedIOException if that directory cannot be deleted
     */
    @Override
    public void close() {
        try {
            kill();
        } finally {
            if (!process.isAlive()) { // a child still alive may still write there
                TempDirs.deleteRecursively(ownTempDir, "child JVM " + this + "'s java.io.tmpdir");
            }
        }
    }

    /**
     * The temporary directory the child got as {@code java.io.tmpdir}, or empty if the builder set one.
     *
     * @return the temporary directory this class created, or empty
     */
    public Optional<Path> tempDir() {
        return Optional.ofNullable(ownTempDir);
    }

    @Override
    public String toString() {
        return "ChildJvm[" + mainClass + ", pid " + process.pid() + ", log " + logFile + "]";
    }

    private void waitFor(Duration bound, String what) {
        try {
            if (!process.waitFor(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new FlowException(this + " is still alive " + Await.format(bound)
                        + " after it was " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while waiting for " + this + " to exit", e);
        } finally {
            if (!process.isAlive()) {
                closeQuietly();
            }
        }
    }

    private void closeQuietly() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // the pipe is gone with the process
        }
    }

    /** Reads the log incrementally, byte-wise so that a UTF-8 character split across reads survives. */
    private final class LogTail {
        private long position;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private final Deque<String> last = new ArrayDeque<>();

        Optional<String> scan(Predicate<String> matcher, boolean atEnd) {
            try (RandomAccessFile file = new RandomAccessFile(logFile.toFile(), "r")) {
                file.seek(position);
                byte[] buffer = new byte[8192];
                int n;
                while ((n = file.read(buffer)) > 0) {
                    for (int i = 0; i < n; i++) {
                        position++;
                        if (buffer[i] == '\n') {
                            Optional<String> found = complete(matcher);
                            if (found.isPresent()) {
                                return found;
                            }
                        } else {
                            line.write(buffer[i]);
                        }
                    }
                }
            } catch (java.io.FileNotFoundException e) {
                return Optional.empty(); // not created yet
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + logFile, e);
            }
            return atEnd && line.size() > 0 ? complete(matcher) : Optional.empty();
        }

        private Optional<String> complete(Predicate<String> matcher) {
            String text = line.toString(StandardCharsets.UTF_8);
            if (text.endsWith("\r")) {
                text = text.substring(0, text.length() - 1);
            }
            line.reset();
            last.addLast(text);
            if (last.size() > TAIL_LINES) {
                last.removeFirst();
            }
            return matcher.test(text) ? Optional.of(text) : Optional.empty();
        }

        String last() {
            return String.join("\n", last);
        }
    }
}
