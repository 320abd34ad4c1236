package io.flowkafka.connectors.registry;

import java.time.Duration;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import org.jspecify.annotations.Nullable;

/**
 * The settings of {@link ConfluentAvroSerde}, {@link ConfluentAvroSerializer} and
 * {@link ConfluentAvroDeserializer}. Keys that Confluent's serdes also read keep Confluent's
 * names and meanings, so the same configuration drives either; keys of our own start with
 * {@code flow.}. Other keys in the map (a whole Kafka Streams configuration, say) are ignored.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConfluentAvroSerdeConfig extends AbstractConfig {
    /** Key of the registry's base URL (Confluent's name). */
    public static final String SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url";
    /** Documentation of {@link #SCHEMA_REGISTRY_URL_CONFIG}. */
    public static final String SCHEMA_REGISTRY_URL_DOC = "The registry's base URL, such as http://registry:8081, "
            + "or mock://<scope> for the in-JVM registry of that scope (tests). One URL.";

    /** Key of whether the serializer registers schemas (Confluent's name). */
    public static final String AUTO_REGISTER_SCHEMAS_CONFIG = "auto.register.schemas";
    /** Documentation of {@link #AUTO_REGISTER_SCHEMAS_CONFIG}. */
    public static final String AUTO_REGISTER_SCHEMAS_DOC = "true: the serializer registers each record's schema "
            + "under the subject (or finds it there) and writes its id; false: it only looks the schema up and "
            + "fails a record whose schema is not registered (or, with use.latest.version, writes with the "
            + "subject's latest version).";
    /** Default of {@link #AUTO_REGISTER_SCHEMAS_CONFIG}: register. */
    public static final boolean AUTO_REGISTER_SCHEMAS_DEFAULT = true;

    /** Key of whether the serializer writes with the subject's latest version (Confluent's name). */
    public static final String USE_LATEST_VERSION_CONFIG = "use.latest.version";
    /** Documentation of {@link #USE_LATEST_VERSION_CONFIG}. */
    public static final String USE_LATEST_VERSION_DOC = "true (needs auto.register.schemas=false): the serializer "
            + "writes every record with the subject's latest version, fetched once per serializer instance, "
            + "taking the record's fields by name.";
    /** Default of {@link #USE_LATEST_VERSION_CONFIG}: off. */
    public static final boolean USE_LATEST_VERSION_DEFAULT = false;

    /** Key of the subject name strategy for record keys (Confluent's name). */
    public static final String KEY_SUBJECT_NAME_STRATEGY_CONFIG = "key.subject.name.strategy";
    /** Key of the subject name strategy for record values (Confluent's name). */
    public static final String VALUE_SUBJECT_NAME_STRATEGY_CONFIG = "value.subject.name.strategy";
    /** Documentation of the two subject name strategy keys. */
    public static final String SUBJECT_NAME_STRATEGY_DOC = "How subjects are named; only Confluent's "
            + "TopicNameStrategy is supported: <topic>-key for keys, <topic>-value for values.";
    /** Confluent's {@code TopicNameStrategy}: the default and only supported subject name strategy. */
    public static final String TOPIC_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy";

    /** Key of where basic-authentication credentials come from (Confluent's name). */
    public static final String BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG = "basic.auth.credentials.source";
    /** Documentation of {@link #BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG}. */
    public static final String BASIC_AUTH_CREDENTIALS_SOURCE_DOC = "Where HTTP basic-authentication credentials "
            + "come from: USER_INFO (basic.auth.user.info) or URL (the user info of schema.registry.url, "
            + "http://user:password@host). basic.auth.user.info, when set, is used with either.";
    /** Default of {@link #BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG}: the URL's user info. */
    public static final String BASIC_AUTH_CREDENTIALS_SOURCE_DEFAULT = "URL";

    /** Key of the basic-authentication {@code user:password} (Confluent's name). */
    public static final String BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info";
    /** Documentation of {@link #BASIC_AUTH_USER_INFO_CONFIG}. */
    public static final String BASIC_AUTH_USER_INFO_DOC = "user:password for HTTP basic authentication.";

    /** Key of the deserializer's reader schema, as Avro JSON. */
    public static final String READER_SCHEMA_CONFIG = "flow.avro.reader.schema";
    /** Documentation of {@link #READER_SCHEMA_CONFIG}. */
    public static final String READER_SCHEMA_DOC = "The deserializer's reader schema, as Avro JSON: records are "
            + "resolved from the writer's schema (fetched by id) to this one, so an added field with a default "
            + "gets its default. Empty: records keep the writer's schema.";

    /** Key of the timeout for each answer of the registry, in milliseconds. */
    public static final String REQUEST_TIMEOUT_MS_CONFIG = "flow.schema.registry.request.timeout.ms";
    /** Documentation of {@link #REQUEST_TIMEOUT_MS_CONFIG}. */
    public static final String REQUEST_TIMEOUT_MS_DOC = "How long, in milliseconds, to wait for each answer of the "
            + "registry.";
    /** Default of {@link #REQUEST_TIMEOUT_MS_CONFIG}: 30 seconds, in milliseconds. */
    public static final long REQUEST_TIMEOUT_MS_DEFAULT = 30_000L;

    /** Key of the timeout for connecting to the registry, in milliseconds. */
    public static final String CONNECT_TIMEOUT_MS_CONFIG = "flow.schema.registry.connect.timeout.ms";
    /** Documentation of {@link #CONNECT_TIMEOUT_MS_CONFIG}. */
    public static final String CONNECT_TIMEOUT_MS_DOC = "How long, in milliseconds, to wait for a connection to the "
            + "registry.";
    /** Default of {@link #CONNECT_TIMEOUT_MS_CONFIG}: 10 seconds, in milliseconds. */
    public static final long CONNECT_TIMEOUT_MS_DEFAULT = 10_000L;

    /** Key of the most entries kept by each cache of the client and of the serde. */
    public static final String CACHE_CAPACITY_CONFIG = "flow.schema.registry.cache.capacity";
    /** Documentation of {@link #CACHE_CAPACITY_CONFIG}. */
    public static final String CACHE_CAPACITY_DOC = "The most entries kept by each cache of the registry client "
            + "(id to schema, subject and schema to id) and of the serde (Avro readers and writers).";
    /** Default of {@link #CACHE_CAPACITY_CONFIG}: 1000 entries. */
    public static final int CACHE_CAPACITY_DEFAULT = 1000;

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(SCHEMA_REGISTRY_URL_CONFIG, Type.STRING, null, Importance.HIGH, SCHEMA_REGISTRY_URL_DOC)
            .define(AUTO_REGISTER_SCHEMAS_CONFIG, Type.BOOLEAN, AUTO_REGISTER_SCHEMAS_DEFAULT, Importance.MEDIUM,
                    AUTO_REGISTER_SCHEMAS_DOC)
            .define(USE_LATEST_VERSION_CONFIG, Type.BOOLEAN, USE_LATEST_VERSION_DEFAULT, Importance.MEDIUM,
                    USE_LATEST_VERSION_DOC)
            .define(KEY_SUBJECT_NAME_STRATEGY_CONFIG, Type.STRING, TOPIC_NAME_STRATEGY,
                    ConfigDef.ValidString.in(TOPIC_NAME_STRATEGY), Importance.LOW, SUBJECT_NAME_STRATEGY_DOC)
            .define(VALUE_SUBJECT_NAME_STRATEGY_CONFIG, Type.STRING, TOPIC_NAME_STRATEGY,
                    ConfigDef.ValidString.in(TOPIC_NAME_STRATEGY), Importance.LOW, SUBJECT_NAME_STRATEGY_DOC)
            .define(BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG, Type.STRING, BASIC_AUTH_CREDENTIALS_SOURCE_DEFAULT,
                    ConfigDef.ValidString.in("URL", "USER_INFO"), Importance.MEDIUM, BASIC_AUTH_CREDENTIALS_SOURCE_DOC)
            .define(BASIC_AUTH_USER_INFO_CONFIG, Type.PASSWORD, null, Importance.MEDIUM, BASIC_AUTH_USER_INFO_DOC)
            .define(READER_SCHEMA_CONFIG, Type.STRING, "", Importance.MEDIUM, READER_SCHEMA_DOC)
            .define(REQUEST_TIMEOUT_MS_CONFIG, Type.LONG, REQUEST_TIMEOUT_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, REQUEST_TIMEOUT_MS_DOC)
            .define(CONNECT_TIMEOUT_MS_CONFIG, Type.LONG, CONNECT_TIMEOUT_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, CONNECT_TIMEOUT_MS_DOC)
            .define(CACHE_CAPACITY_CONFIG, Type.INT, CACHE_CAPACITY_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, CACHE_CAPACITY_DOC);

    private final @Nullable Schema readerSchema;

    /**
     * Parses and checks {@code configs}.
     *
     * @param configs the settings; keys this class does not define are ignored
     * @throws ConfigException naming the key, the value and the fix, for a bad value or a
     *     combination that cannot work
     */
    public ConfluentAvroSerdeConfig(Map<String, ?> configs) {
        super(CONFIG, configs, false);
        if (getBoolean(USE_LATEST_VERSION_CONFIG) && getBoolean(AUTO_REGISTER_SCHEMAS_CONFIG)) {
            throw new ConfigException(USE_LATEST_VERSION_CONFIG, true, "use.latest.version=true needs "
                    + "auto.register.schemas=false (with auto-registration every record's own schema is written); "
                    + "set auto.register.schemas=false or drop use.latest.version");
        }
        if ("USER_INFO".equals(getString(BASIC_AUTH_CREDENTIALS_SOURCE_CONFIG)) && userInfo() == null) {
            throw new ConfigException(BASIC_AUTH_USER_INFO_CONFIG, null, "basic.auth.credentials.source=USER_INFO "
                    + "needs basic.auth.user.info=user:password");
        }
        String userInfo = userInfo();
        if (userInfo != null && !userInfo.contains(":")) {
            throw new ConfigException(BASIC_AUTH_USER_INFO_CONFIG, "[hidden]", "must be user:password but has no ':'");
        }
        String reader = getString(READER_SCHEMA_CONFIG);
        try {
            this.readerSchema = reader.isBlank() ? null : new Schema.Parser().parse(reader);
        } catch (SchemaParseException e) {
            throw new ConfigException(READER_SCHEMA_CONFIG, abbreviate(reader), "not an Avro schema: " + e.getMessage());
        }
    }

    /**
     * The definitions, for documentation ({@code configDef().toHtml()}).
     *
     * @return a copy of the definitions of every key of this class
     */
    public static ConfigDef configDef() {
        return new ConfigDef(CONFIG);
    }

    /**
     * The registry URL.
     *
     * @return {@link #SCHEMA_REGISTRY_URL_CONFIG}; null when not set
     */
    public @Nullable String url() {
        return getString(SCHEMA_REGISTRY_URL_CONFIG);
    }

    /**
     * The basic-authentication credentials.
     *
     * @return {@code user:password}; null when not set or empty
     */
    public @Nullable String userInfo() {
        Password password = getPassword(BASIC_AUTH_USER_INFO_CONFIG);
        return password == null || password.value().isEmpty() ? null : password.value();
    }

    /**
     * The deserializer's reader schema.
     *
     * @return the parsed {@link #READER_SCHEMA_CONFIG}; null to keep the writer's schema
     */
    public @Nullable Schema readerSchema() {
        return readerSchema;
    }

    /**
     * The client for {@link #url()}: the shared {@link MockSchemaRegistry} of a {@code mock://}
     * URL, else a new {@link RestSchemaRegistryClient}.
     *
     * @return a client for the configured registry, with this configuration's timeouts, cache
     *     capacity and credentials
     * @throws ConfigException if the URL is missing or is not a registry URL
     */
    public SchemaRegistryClient createClient() {
        String url = url();
        if (url == null || url.isBlank()) {
            throw new ConfigException(SCHEMA_REGISTRY_URL_CONFIG, url, "set it to the registry's URL, such as "
                    + "http://registry:8081, or to mock://<scope> in tests");
        }
        try {
            if (MockSchemaRegistry.isMockUrl(url)) {
                return MockSchemaRegistry.forUrl(url);
            }
            RestSchemaRegistryClient.Builder builder = RestSchemaRegistryClient.builder(url)
                    .requestTimeout(Duration.ofMillis(getLong(REQUEST_TIMEOUT_MS_CONFIG)))
                    .connectTimeout(Duration.ofMillis(getLong(CONNECT_TIMEOUT_MS_CONFIG)))
                    .cacheCapacity(getInt(CACHE_CAPACITY_CONFIG));
            String userInfo = userInfo();
            if (userInfo != null) {
                builder.basicAuth(userInfo);
            }
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(SCHEMA_REGISTRY_URL_CONFIG, url.replaceAll("//[^/@]*@", "//***@"), e.getMessage());
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }
}
