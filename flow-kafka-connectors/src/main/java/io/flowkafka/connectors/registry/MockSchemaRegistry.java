package io.flowkafka.connectors.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;

/**
 * An in-memory schema registry for tests, reached by serdes configured with
 * {@code schema.registry.url=mock://<scope>}, as with Confluent's serdes.
 *
 * <p>Each scope is one registry shared by everything in the JVM that names it, so a serializer
 * and a deserializer configured with the same {@code mock://} URL see the same schemas.
 * {@link #dropScope} forgets a scope; the next use starts empty. It behaves like a registry with
 * compatibility level {@code BACKWARD}: ids are registry-wide and start at 1, the same schema
 * under another subject gets the same id, versions count from 1 per subject, and a schema the
 * latest version cannot be read with is refused with 409 (error code 40901). Errors carry the
 * registry's error codes (40401, 40403).
 *
 * <p>Thread-safe.
 */
public final class MockSchemaRegistry implements SchemaRegistryClient {
    /** The URL scheme that selects a mock registry. */
    public static final String URL_PREFIX = "mock://";

    private static final ConcurrentMap<String, MockSchemaRegistry> SCOPES = new ConcurrentHashMap<>();

    private final String url;
    private final List<Schema> schemasById = new ArrayList<>();
    private final Map<Schema, Integer> idsBySchema = new HashMap<>();
    private final Map<String, List<Integer>> versionsBySubject = new HashMap<>();

    /**
     * A registry of its own, shared with nobody.
     *
     * @param name appears as {@code mock://name} in error messages
     */
    public MockSchemaRegistry(String name) {
        this.url = URL_PREFIX + Objects.requireNonNull(name, "name");
    }

    /**
     * The registry of {@code scope}, created empty on first use.
     *
     * @param scope the scope's name, as in {@code mock://scope}
     * @return the registry shared by every user of that scope in this JVM
     */
    public static MockSchemaRegistry forScope(String scope) {
        Objects.requireNonNull(scope, "scope");
        return SCOPES.computeIfAbsent(scope, MockSchemaRegistry::new);
    }

    /**
     * The registry of a {@code mock://scope} URL.
     *
     * @param url a URL of the form {@code mock://scope}
     * @return the registry shared by every user of that scope in this JVM
     * @throws IllegalArgumentException if {@code url} does not start with {@code mock://} or
     *     names no scope
     */
    public static MockSchemaRegistry forUrl(String url) {
        Objects.requireNonNull(url, "url");
        String scope = url.startsWith(URL_PREFIX) ? url.substring(URL_PREFIX.length()) : "";
        if (!url.startsWith(URL_PREFIX) || scope.isEmpty() || scope.contains(",")) {
            throw new IllegalArgumentException("mock registry URL must be mock://<scope> with one scope but was " + url);
        }
        return forScope(scope);
    }

    /**
     * Whether {@code url} selects a mock registry.
     *
     * @param url a registry URL
     * @return true if it starts with {@link #URL_PREFIX}
     */
    public static boolean isMockUrl(String url) {
        return url.startsWith(URL_PREFIX);
    }

    /**
     * Forgets the registry of {@code scope}; clients already holding it keep using the old one.
     *
     * @param scope the scope's name, as in {@code mock://scope}
     */
    public static void dropScope(String scope) {
        SCOPES.remove(Objects.requireNonNull(scope, "scope"));
    }

    /**
     * The URL of this registry.
     *
     * @return {@code mock://} followed by the scope or name
     */
    public String url() {
        return url;
    }

    /**
     * The subjects registered so far.
     *
     * @return a sorted copy of the subjects
     */
    public synchronized Set<String> subjects() {
        return new TreeSet<>(versionsBySubject.keySet());
    }

    @Override
    public synchronized int register(String subject, Schema schema) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(schema, "schema");
        List<Integer> versions = versionsBySubject.get(subject);
        Integer known = idsBySchema.get(schema);
        if (versions != null && known != null && versions.contains(known)) {
            return known;
        }
        if (versions != null) {
            List<String> problems = incompatibilities(subject, schema);
            if (!problems.isEmpty()) {
                throw new SchemaRegistryException("register under subject '" + subject + "' at " + url + " failed: "
                        + "HTTP 409, error_code " + SchemaRegistryException.INCOMPATIBLE_SCHEMA + ": Schema being "
                        + "registered is incompatible with an earlier schema for subject \"" + subject + "\", details: "
                        + problems, url, subject, 409, SchemaRegistryException.INCOMPATIBLE_SCHEMA, null);
            }
        }
        int id = idsBySchema.computeIfAbsent(schema, s -> {
            schemasById.add(s);
            return schemasById.size();
        });
        versionsBySubject.computeIfAbsent(subject, s -> new ArrayList<>()).add(id);
        return id;
    }

    @Override
    public synchronized RegisteredSchema lookup(String subject, Schema schema) {
        List<Integer> versions = versions(subject);
        Integer id = idsBySchema.get(Objects.requireNonNull(schema, "schema"));
        int index = id == null ? -1 : versions.indexOf(id);
        if (index < 0) {
            throw new SchemaRegistryException("lookup under subject '" + subject + "' at " + url + " failed: HTTP 404, "
                    + "error_code " + SchemaRegistryException.SCHEMA_NOT_FOUND + ": Schema not found (the schema "
                    + schema.getFullName() + " is not registered under the subject)", url, subject, 404,
                    SchemaRegistryException.SCHEMA_NOT_FOUND, null);
        }
        return new RegisteredSchema(subject, versions.get(index), index + 1, schema);
    }

    @Override
    public synchronized Schema schemaById(int id) {
        if (id < 1 || id > schemasById.size()) {
            throw new SchemaRegistryException("schema id " + id + " at " + url + ": HTTP 404, error_code "
                    + SchemaRegistryException.SCHEMA_NOT_FOUND + ": Schema " + id + " not found", url, null, 404,
                    SchemaRegistryException.SCHEMA_NOT_FOUND, null);
        }
        return schemasById.get(id - 1);
    }

    @Override
    public synchronized RegisteredSchema latest(String subject) {
        List<Integer> versions = versions(subject);
        int id = versions.get(versions.size() - 1);
        return new RegisteredSchema(subject, id, versions.size(), schemasById.get(id - 1));
    }

    @Override
    public synchronized CompatibilityResult testCompatibility(String subject, Schema schema) {
        versions(subject);
        List<String> problems = incompatibilities(subject, Objects.requireNonNull(schema, "schema"));
        return new CompatibilityResult(problems.isEmpty(), problems);
    }

    @Override
    public String toString() {
        return "MockSchemaRegistry[" + url + "]";
    }

    /** BACKWARD: the new schema must read data written with the latest version. */
    private List<String> incompatibilities(String subject, Schema schema) {
        Schema latest = latest(subject).schema();
        SchemaPairCompatibility pair = SchemaCompatibility.checkReaderWriterCompatibility(schema, latest);
        List<String> problems = new ArrayList<>();
        for (Incompatibility incompatibility : pair.getResult().getIncompatibilities()) {
            problems.add(incompatibility.getType() + " at " + incompatibility.getLocation() + ": "
                    + incompatibility.getMessage());
        }
        return problems;
    }

    private List<Integer> versions(String subject) {
        List<Integer> versions = versionsBySubject.get(Objects.requireNonNull(subject, "subject"));
        if (versions == null) {
            throw new SchemaRegistryException("subject '" + subject + "' at " + url + ": HTTP 404, error_code "
                    + SchemaRegistryException.SUBJECT_NOT_FOUND + ": Subject '" + subject + "' not found.", url, subject,
                    404, SchemaRegistryException.SUBJECT_NOT_FOUND, null);
        }
        return versions;
    }
}
