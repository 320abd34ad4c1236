package io.flowkafka.connectors.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link SchemaRegistryClient} over the Confluent Schema Registry REST API, with the JDK's
 * HTTP client.
 *
 * <p>Requests send {@code Content-Type: application/vnd.schemaregistry.v1+json} and accept the
 * registry's media types; optional HTTP basic authentication. Two bounded caches spare requests:
 * schema id to schema (filled by {@link #schemaById}, {@link #register}, {@link #lookup} and
 * {@link #latest}) and (subject, schema) to id (filled by {@link #register} and {@link #lookup}).
 * Ids never change meaning in a registry, so entries do not expire; the least recently used go
 * when a cache is full. {@link #latest} and {@link #testCompatibility} always ask the registry.
 *
 * <pre>{@code
 * SchemaRegistryClient registry = RestSchemaRegistryClient.builder("http://registry:8081")
 *     .basicAuth("user:password")
 *     .requestTimeout(Duration.ofSeconds(10))
 *     .build();
 * int id = registry.register("orders-value", schema);
 * }</pre>
 *
 * <p>Limitations:
 * <ol>
 *   <li>one registry URL, no fail-over between several;</li>
 *   <li>Avro schemas only, without schema references;</li>
 *   <li>basic authentication only (no bearer tokens, no mutual TLS beyond the JDK's defaults).</li>
 * </ol>
 *
 * <p>Thread-safe. Holds no resource that needs closing.
 */
public final class RestSchemaRegistryClient implements SchemaRegistryClient {
    /** The media type of the registry's API, version 1. */
    public static final String MEDIA_TYPE = "application/vnd.schemaregistry.v1+json";
    /** The {@code Accept} header sent, as the registry's API reference shows it. */
    static final String ACCEPT = MEDIA_TYPE + ", application/vnd.schemaregistry+json, application/json";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY_IN_MESSAGE = 300;

    private final String baseUrl;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final @Nullable String authorization;
    private final Cache<Integer, Schema> schemasById;
    private final Cache<SubjectSchema, Integer> idsBySubjectSchema;

    private record SubjectSchema(String subject, Schema schema) {}

    private RestSchemaRegistryClient(Builder builder) {
        this.baseUrl = builder.baseUrl;
        this.requestTimeout = builder.requestTimeout;
        String userInfo = builder.userInfo;
        this.authorization = userInfo == null ? null
                : "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(builder.connectTimeout)
                .build();
        this.schemasById = CacheBuilder.newBuilder().maximumSize(builder.cacheCapacity).build();
        this.idsBySubjectSchema = CacheBuilder.newBuilder().maximumSize(builder.cacheCapacity).build();
    }

    /**
     * A builder for a client of the registry at {@code url}.
     *
     * @param url the registry's base URL, {@code http://} or {@code https://}, such as
     *     {@code http://registry:8081}; user info in it ({@code http://user:password@host}) is
     *     taken as basic-authentication credentials
     * @return a builder with default timeouts and cache capacity
     * @throws IllegalArgumentException if {@code url} is not one absolute http(s) URL
     */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /**
     * The registry this client talks to.
     *
     * @return the registry's base URL, without credentials and without a trailing slash
     */
    public String url() {
        return baseUrl;
    }

    @Override
    public int register(String subject, Schema schema) {
        Objects.requireNonNull(schema, "schema");
        SubjectSchema key = new SubjectSchema(Objects.requireNonNull(subject, "subject"), schema);
        Integer cached = idsBySubjectSchema.getIfPresent(key);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = send("POST", "/subjects/" + segment(subject) + "/versions", schemaBody(schema), subject);
        int id = intField(answer, "id", "POST /subjects/" + subject + "/versions", subject);
        idsBySubjectSchema.put(key, id);
        schemasById.put(id, schema);
        return id;
    }

    @Override
    public RegisteredSchema lookup(String subject, Schema schema) {
        Objects.requireNonNull(schema, "schema");
        String what = "POST /subjects/" + Objects.requireNonNull(subject, "subject");
        JsonNode answer = send("POST", "/subjects/" + segment(subject), schemaBody(schema), subject);
        int id = intField(answer, "id", what, subject);
        int version = intField(answer, "version", what, subject);
        idsBySubjectSchema.put(new SubjectSchema(subject, schema), id);
        schemasById.put(id, schema);
        return new RegisteredSchema(subject, id, version, schema);
    }

    @Override
    public Schema schemaById(int id) {
        Schema cached = schemasById.getIfPresent(id);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = send("GET", "/schemas/ids/" + id, null, null);
        Schema schema = parseSchema(answer, "GET /schemas/ids/" + id, null);
        schemasById.put(id, schema);
        return schema;
    }

    @Override
    public RegisteredSchema latest(String subject) {
        String what = "GET /subjects/" + Objects.requireNonNull(subject, "subject") + "/versions/latest";
        JsonNode answer = send("GET", "/subjects/" + segment(subject) + "/versions/latest", null, subject);
        int id = intField(answer, "id", what, subject);
        int version = intField(answer, "version", what, subject);
        Schema schema = parseSchema(answer, what, subject);
        schemasById.put(id, schema);
        return new RegisteredSchema(subject, id, version, schema);
    }

    @Override
    public CompatibilityResult testCompatibility(String subject, Schema schema) {
        Objects.requireNonNull(schema, "schema");
        String what = "POST /compatibility/subjects/" + Objects.requireNonNull(subject, "subject") + "/versions/latest";
        JsonNode answer = send("POST", "/compatibility/subjects/" + segment(subject) + "/versions/latest?verbose=true",
                schemaBody(schema), subject);
        JsonNode compatible = answer.get("is_compatible");
        if (compatible == null || !compatible.isBoolean()) {
            throw malformed(what, subject, "no boolean \"is_compatible\"", answer);
        }
        List<String> messages = new ArrayList<>();
        answer.path("messages").forEach(m -> messages.add(m.isTextual() ? m.asText() : m.toString()));
        return new CompatibilityResult(compatible.asBoolean(), messages);
    }

    @Override
    public String toString() {
        return "RestSchemaRegistryClient[" + baseUrl + "]";
    }

    private static String schemaBody(Schema schema) {
        // "schemaType" is left out: AVRO is the default.
        return JSON.createObjectNode().put("schema", schema.toString()).toString();
    }

    /** Encodes one path segment: a subject may hold any character. */
    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private JsonNode send(String method, String path, @Nullable String body, @Nullable String subject) {
        String url = baseUrl + path;
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
                .timeout(requestTimeout)
                .header("Accept", ACCEPT);
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        if (body == null) {
            request.GET();
        } else {
            request.header("Content-Type", MEDIA_TYPE).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        }
        String call = method + " " + url + subjectClause(subject);
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (HttpTimeoutException e) {
            throw new SchemaRegistryException(call + " got no answer within " + requestTimeout.toMillis()
                    + " ms (" + e.getMessage() + ")", baseUrl, subject, SchemaRegistryException.NO_RESPONSE,
                    SchemaRegistryException.NO_ERROR_CODE, e);
        } catch (IOException e) {
            throw new SchemaRegistryException(call + " failed: the registry could not be reached (" + e + ")",
                    baseUrl, subject, SchemaRegistryException.NO_RESPONSE, SchemaRegistryException.NO_ERROR_CODE, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaRegistryException(call + " was interrupted", baseUrl, subject,
                    SchemaRegistryException.NO_RESPONSE, SchemaRegistryException.NO_ERROR_CODE, e);
        }
        int status = response.statusCode();
        JsonNode json = null;
        try {
            json = response.body().isBlank() ? null : JSON.readTree(response.body());
        } catch (IOException notJson) {
            // an error page of a proxy, say: reported below with its text
        }
        if (status >= 200 && status < 300) {
            if (json == null || !json.isObject()) {
                throw new SchemaRegistryException(call + " answered " + status + " with a body that is not a JSON "
                        + "object: " + abbreviate(response.body()), baseUrl, subject, status,
                        SchemaRegistryException.NO_ERROR_CODE, null);
            }
            return json;
        }
        int errorCode = json != null && json.path("error_code").canConvertToInt()
                ? json.path("error_code").asInt() : SchemaRegistryException.NO_ERROR_CODE;
        String message = json != null && json.path("message").isTextual()
                ? json.path("message").asText() : abbreviate(response.body());
        StringBuilder text = new StringBuilder(call).append(" failed: HTTP ").append(status);
        if (errorCode != SchemaRegistryException.NO_ERROR_CODE) {
            text.append(", error_code ").append(errorCode);
        }
        text.append(": ").append(message.isEmpty() ? "(no message)" : message);
        if (status == 401 || status == 403) {
            text.append(" (check basic.auth.user.info: the registry did not accept ")
                    .append(authorization == null ? "a request without credentials)" : "the credentials)");
        }
        throw new SchemaRegistryException(text.toString(), baseUrl, subject, status, errorCode, null);
    }

    private Schema parseSchema(JsonNode answer, String what, @Nullable String subject) {
        String type = answer.path("schemaType").asText("AVRO");
        if (!"AVRO".equals(type)) {
            throw malformed(what, subject, "a " + type + " schema; this client reads AVRO schemas only", answer);
        }
        JsonNode text = answer.get("schema");
        if (text == null || !text.isTextual()) {
            throw malformed(what, subject, "no \"schema\" string", answer);
        }
        try {
            return new Schema.Parser().parse(text.asText());
        } catch (SchemaParseException e) {
            throw malformed(what, subject, "a schema Avro cannot parse (" + e.getMessage() + ")", answer);
        }
    }

    private int intField(JsonNode answer, String field, String what, @Nullable String subject) {
        JsonNode value = answer.get(field);
        if (value == null || !value.canConvertToInt()) {
            throw malformed(what, subject, "no integer \"" + field + "\"", answer);
        }
        return value.asInt();
    }

    private SchemaRegistryException malformed(String what, @Nullable String subject, String problem, JsonNode answer) {
        return new SchemaRegistryException(what + " at " + baseUrl + subjectClause(subject) + " answered with "
                + problem + ": " + abbreviate(answer.toString()), baseUrl, subject, 200,
                SchemaRegistryException.NO_ERROR_CODE, null);
    }

    private static String subjectClause(@Nullable String subject) {
        return subject == null ? "" : " (subject '" + subject + "')";
    }

    private static String abbreviate(String text) {
        String flat = text.strip().replaceAll("\\s+", " ");
        return flat.length() <= MAX_BODY_IN_MESSAGE ? flat : flat.substring(0, MAX_BODY_IN_MESSAGE) + "...";
    }

    /**
     * Builds a {@link RestSchemaRegistryClient}. Setters validate at once; {@link #build()} may be
     * called more than once. Not thread-safe.
     */
    public static final class Builder {
        private final String baseUrl;
        private @Nullable String userInfo;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private int cacheCapacity = 1000;

        private Builder(String url) {
            Objects.requireNonNull(url, "url");
            String shown = url.replaceAll("//[^/@]*@", "//***@");
            if (url.contains(",")) {
                throw new IllegalArgumentException("schema registry URL " + shown + " lists several URLs; this client "
                        + "talks to one: give one URL (a load balancer in front of the registry nodes)");
            }
            URI uri;
            try {
                uri = new URI(url.strip());
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("schema registry URL " + shown + " is not a URL: " + e.getReason());
            }
            if (uri.getScheme() == null || !List.of("http", "https").contains(uri.getScheme().toLowerCase(Locale.ROOT))
                    || uri.getHost() == null) {
                throw new IllegalArgumentException("schema registry URL " + shown + " must be an absolute http:// or "
                        + "https:// URL such as http://registry:8081");
            }
            if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
                throw new IllegalArgumentException("schema registry URL " + shown + " must have no query or fragment");
            }
            if (uri.getRawUserInfo() != null) {
                this.userInfo = URLDecoder.decode(uri.getRawUserInfo(), StandardCharsets.UTF_8);
            }
            String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
            this.baseUrl = uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort()) + path;
        }

        /**
         * Sends HTTP basic authentication.
         *
         * @param userInfo {@code user:password}, as Confluent's {@code basic.auth.user.info}
         * @return this builder
         * @throws IllegalArgumentException if it has no {@code :}
         */
        public Builder basicAuth(String userInfo) {
            Objects.requireNonNull(userInfo, "userInfo");
            if (!userInfo.contains(":")) {
                throw new IllegalArgumentException("basic.auth.user.info must be user:password but has no ':'");
            }
            this.userInfo = userInfo;
            return this;
        }

        /**
         * How long to wait for a connection (default 10 s).
         *
         * @param timeout the connect timeout; positive
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connect timeout");
            return this;
        }

        /**
         * How long to wait for each answer (default 30 s).
         *
         * @param timeout the timeout of each request; positive
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "request timeout");
            return this;
        }

        /**
         * The most entries each cache keeps (default 1000).
         *
         * @param capacity the most entries per cache; at least 1
         * @return this builder
         * @throws IllegalArgumentException if less than 1
         */
        public Builder cacheCapacity(int capacity) {
            if (capacity < 1) {
                throw new IllegalArgumentException("cache capacity must be >= 1 but was " + capacity);
            }
            this.cacheCapacity = capacity;
            return this;
        }

        /**
         * A new client with these settings.
         *
         * @return the client
         */
        public RestSchemaRegistryClient build() {
            return new RestSchemaRegistryClient(this);
        }

        private static Duration positive(Duration timeout, String what) {
            Objects.requireNonNull(timeout, what);
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException(what + " must be positive but was " + timeout);
            }
            return timeout;
        }
    }
}
