package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.avro.file.SeekableFileInput;
import org.apache.avro.file.SeekableInput;

/**
 * A {@link TablesDirectory} on a local (or POSIX-mounted) filesystem. It keeps the rule "listed
 * means complete" by rename: a table is written under {@code .pending-<uuid>} in the same
 * directory, its files and its {@code _table.json} manifest are forced to disk, and one
 * {@code rename(2)} gives it its name.
 *
 * <p>Layout of the directory:
 * <pre>
 * _attributes.json          the directory's attributes (replaced by rename)
 * .pending-&lt;uuid&gt;/          a table being written, never listed
 * .removing-&lt;uuid&gt;/         a table being deleted, never listed
 * &lt;table&gt;/_table.json       a table's attributes and part list
 * &lt;table&gt;/part-00000.avro   its part files
 * </pre>
 * Names starting with {@code .} or {@code _} are never tables. A child directory without
 * {@code _table.json} (copied in by another tool) is listed with no table timestamp and its
 * {@code .avro} files as parts, their counts read from the Avro block headers; it is
 * {@linkplain #complete complete} once it holds {@code _SUCCESS}.
 *
 * <p>Thread-safe; several processes may share the directory. Two publishers of one name: the
 * second gets {@link FileAlreadyExistsException}.
 */
public final class LocalTablesDirectory implements TablesDirectory {
    static final String MANIFEST = "_table.json";
    static final String DIRECTORY_ATTRIBUTES = "_attributes.json";
    /** The marker another tool's writer leaves in a table it has finished (Hadoop's output committer). */
    static final String SUCCESS = "_SUCCESS";
    private static final String PENDING = ".pending-";
    private static final String REMOVING = ".removing-";

    private final Path root;

    private LocalTablesDirectory(Path root) {
        this.root = root;
    }

    /**
     * Opens a tables directory, creating it (and its parents) if it does not exist.
     *
     * @param root the directory; not null
     * @return the tables directory
     * @throws IOException if it cannot be created or is not a directory
     */
    public static LocalTablesDirectory open(Path root) throws IOException {
        Objects.requireNonNull(root, "root");
        Files.createDirectories(root);
        return new LocalTablesDirectory(root.toAbsolutePath());
    }

    /**
     * The directory on disk.
     *
     * @return the absolute path of the tables directory
     */
    public Path root() {
        return root;
    }

    @Override
    public List<String> tableNames() throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> children = Files.list(root)) {
            children.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(n -> !n.startsWith(".") && !n.startsWith("_")).forEach(names::add);
        }
        names.sort(Comparator.naturalOrder());
        return names;
    }

    @Override
    public TableAttributes attributes(String table) throws IOException {
        Path dir = tableDir(table);
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "no such table");
        }
        Path manifest = dir.resolve(MANIFEST);
        try {
            return TableAttributesJson.read(Files.readAllBytes(manifest), manifest.toString());
        } catch (NoSuchFileException e) {
            if (!Files.isDirectory(dir)) {
                throw new NoSuchFileException(dir.toString(), null, "no such table");
            }
            return foreignAttributes(dir);
        }
    }

    @Override
    public boolean complete(String table) throws IOException {
        Path dir = tableDir(table);
        return Files.exists(dir.resolve(MANIFEST)) || Files.exists(dir.resolve(SUCCESS));
    }

    private TableAttributes foreignAttributes(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> children = Files.list(dir)) {
            files = children.filter(p -> p.getFileName().toString().endsWith(".avro")).sorted().toList();
        }
        List<TablePart> parts = new ArrayList<>();
        for (Path f : files) {
            AvroParts.Counts c = AvroParts.count(f);
            parts.add(TablePart.of(f.getFileName().toString(), c.rows(), Files.size(f), c.encodedBytes()));
        }
        return TableAttributes.of(null, parts);
    }

    @Override
    public SeekableInput openPart(String table, String part) throws IOException {
        checkPartName(part);
        Path file = tableDir(table).resolve(part);
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such part");
        }
        return new SeekableFileInput(file.toFile());
    }

    @Override
    public PendingTable beginTable() throws IOException {
        Path dir = root.resolve(PENDING + UUID.randomUUID());
        Files.createDirectory(dir);
        return new LocalPendingTable(dir);
    }

    @Override
    public boolean removeTable(String table) throws IOException {
        Path dir = tableDir(table);
        Path doomed = root.resolve(REMOVING + UUID.randomUUID());
        try {
            Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            return false;
        }
        forceDirectory(root);
        deleteRecursively(doomed);
        return true;
    }

    @Override
    public ObjectNode directoryAttributes() throws IOException {
        Path file = root.resolve(DIRECTORY_ATTRIBUTES);
        try {
            JsonNode node = TableAttributesJson.MAPPER.readTree(Files.readAllBytes(file));
            if (node == null || !node.isObject()) {
                throw new IOException(file + ": directory attributes must be a JSON object");
            }
            return (ObjectNode) node;
        } catch (NoSuchFileException e) {
            return TableAttributesJson.MAPPER.createObjectNode();
        }
    }

    @Override
    public void replaceDirectoryAttributes(ObjectNode attributes) throws IOException {
        Objects.requireNonNull(attributes, "attributes");
        Path tmp = root.resolve(PENDING + UUID.randomUUID() + DIRECTORY_ATTRIBUTES);
        try {
            writeDurably(tmp, TableAttributesJson.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(attributes));
            Files.move(tmp, root.resolve(DIRECTORY_ATTRIBUTES), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            forceDirectory(root);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    @Override
    public int removeAbandoned() throws IOException {
        List<Path> leftovers;
        try (Stream<Path> children = Files.list(root)) {
            leftovers = children.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith(PENDING) || n.startsWith(REMOVING);
            }).toList();
        }
        for (Path p : leftovers) {
            deleteRecursively(p);
        }
        return leftovers.size();
    }

    @Override
    public String toString() {
        return "LocalTablesDirectory[" + root + "]";
    }

    private Path tableDir(String table) {
        checkTableName(table);
        return root.resolve(table);
    }

    static void checkTableName(String table) {
        Objects.requireNonNull(table, "table");
        if (table.isEmpty() || table.contains("/") || table.contains("\\") || table.startsWith(".")
                || table.startsWith("_")) {
            throw new IllegalArgumentException("table name must be a non-empty file name not starting with '.' or '_' "
                    + "but was '" + table + "'");
        }
    }

    private static void checkPartName(String part) {
        Objects.requireNonNull(part, "part");
        if (part.isEmpty() || part.contains("/") || part.contains("\\") || part.startsWith(".")
                || part.equals(MANIFEST)) {
            throw new IllegalArgumentException("part name must be a file name not starting with '.' and not "
                    + MANIFEST + " but was '" + part + "'");
        }
    }

    private static void writeDurably(Path file, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(bytes));
            ch.force(true);
        }
    }

    private static void forceFile(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    private static void forceDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some platforms cannot open a directory for fsync; rename is still atomic there.
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** A table written under {@code .pending-<uuid>}; owned by one writer thread. */
    private final class LocalPendingTable implements PendingTable {
        private final Path dir;
        private final Set<String> created = new HashSet<>();
        private boolean done;

        LocalPendingTable(Path dir) {
            this.dir = dir;
        }

        @Override
        public OutputStream createPart(String part) throws IOException {
            checkOpen();
            checkPartName(part);
            OutputStream out = Files.newOutputStream(dir.resolve(part), StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            created.add(part);
            return out;
        }

        @Override
        public void publish(String table, TableAttributes attributes) throws IOException {
            checkOpen();
            Path target = tableDir(table);
            Objects.requireNonNull(attributes, "attributes");
            for (TablePart p : attributes.parts()) {
                if (!created.contains(p.name())) {
                    throw new IllegalArgumentException("attributes list part " + p.name()
                            + " that was not created in this pending table; create it with createPart first");
                }
            }
            for (String part : created) {
                forceFile(dir.resolve(part));
            }
            Path manifest = dir.resolve(MANIFEST);
            Files.deleteIfExists(manifest);
            writeDurably(manifest, TableAttributesJson.write(attributes));
            forceDirectory(dir);
            if (Files.exists(target)) {
                throw new FileAlreadyExistsException(target.toString(), null, "table exists");
            }
            try {
                Files.move(dir, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileSystemException e) {
                // Another publisher won the race: Linux reports ENOTEMPTY, which Java may not map to a subtype.
                if (!Files.exists(target)) {
                    throw e;
                }
                FileAlreadyExistsException taken = new FileAlreadyExistsException(target.toString(), null,
                        "table exists");
                taken.initCause(e);
                throw taken;
            }
            forceDirectory(root);
            done = true;
        }

        @Override
        public void close() throws IOException {
            if (!done) {
                done = true;
                deleteRecursively(dir);
            }
        }

        private void checkOpen() {
            if (done) {
                throw new IllegalStateException("pending table " + dir.getFileName() + " was already published or closed");
            }
        }
    }
}
