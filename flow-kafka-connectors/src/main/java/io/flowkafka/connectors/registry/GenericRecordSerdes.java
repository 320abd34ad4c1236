package io.flowkafka.connectors.registry;

import com.google.common.reflect.TypeToken;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Serde;

/**
 * Makes a {@code Serde<GenericRecord>} from a class name and a configuration map, so that the
 * serde of a source, sink or stream is a parameter and users who have Confluent's jar can choose
 * Confluent's serde:
 * <pre>{@code
 * // "value_serde": "io.flowkafka.connectors.registry.ConfluentAvroSerde"            (ours)
 * // "value_serde": "io.confluent.kafka.streams.serdes.avro.GenericAvroSerde"        (Confluent's)
 * Serde<GenericRecord> serde = GenericRecordSerdes.create(params.get("value_serde"),
 *     Map.of("schema.registry.url", "http://registry:8081"), false);
 * }</pre>
 * Both read {@code schema.registry.url}, {@code auto.register.schemas},
 * {@code use.latest.version} and {@code basic.auth.*} the same way.
 *
 * <p>Thread-safe: holds no state.
 */
public final class GenericRecordSerdes {
    /** Our serde, {@link ConfluentAvroSerde}. */
    public static final String DEFAULT_SERDE_CLASS = "io.flowkafka.connectors.registry.ConfluentAvroSerde";
    /** Confluent's generic Avro serde (from Confluent's Maven repository, not Maven Central). */
    public static final String CONFLUENT_SERDE_CLASS = "io.confluent.kafka.streams.serdes.avro.GenericAvroSerde";

    private GenericRecordSerdes() {}

    /**
     * Instantiates {@code className} with its public no-argument constructor and configures it.
     * The class is loaded by the thread's context class loader, else by this class's.
     *
     * @param className a class implementing {@code Serde<GenericRecord>}
     * @param configs passed to {@link Serde#configure}
     * @param isKey whether the serde is for keys
     * @return the configured serde; the caller closes it
     * @throws IllegalArgumentException if the class is not on the class path, is not a
     *     {@code Serde} of {@code GenericRecord}, or has no public no-argument constructor; the
     *     message names the class and the fix
     * @throws org.apache.kafka.common.config.ConfigException if the serde rejects {@code configs}
     */
    public static Serde<GenericRecord> create(String className, Map<String, ?> configs, boolean isKey) {
        Objects.requireNonNull(className, "className");
        Objects.requireNonNull(configs, "configs");
        Class<?> type = load(className.strip());
        if (!Serde.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException("serde class " + className + " does not implement "
                    + Serde.class.getName() + "; name a Serde<GenericRecord> such as " + DEFAULT_SERDE_CLASS);
        }
        Class<?> handled = TypeToken.of(type).resolveType(Serde.class.getTypeParameters()[0]).getRawType();
        if (!handled.isAssignableFrom(GenericRecord.class)) {
            throw new IllegalArgumentException("serde class " + className + " is a Serde<" + handled.getName()
                    + ">, not a Serde<GenericRecord>; name a GenericRecord serde such as " + DEFAULT_SERDE_CLASS
                    + " or " + CONFLUENT_SERDE_CLASS);
        }
        Serde<?> serde = instantiate(type, className);
        serde.configure(configs, isKey);
        @SuppressWarnings("unchecked")
        Serde<GenericRecord> typed = (Serde<GenericRecord>) serde;
        return typed;
    }

    private static Class<?> load(String className) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try {
            return Class.forName(className, true, loader != null ? loader : GenericRecordSerdes.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            String fix = CONFLUENT_SERDE_CLASS.equals(className)
                    ? "add io.confluent:kafka-streams-avro-serde (Confluent's Maven repository) to the class path, or "
                            + "use " + DEFAULT_SERDE_CLASS
                    : "check the name and add the jar that holds it to the class path";
            throw new IllegalArgumentException("serde class " + className + " is not on the class path: " + fix, e);
        } catch (LinkageError e) {
            throw new IllegalArgumentException("serde class " + className + " could not be loaded: " + e, e);
        }
    }

    private static Serde<?> instantiate(Class<?> type, String className) {
        if (Modifier.isAbstract(type.getModifiers())) {
            throw new IllegalArgumentException("serde class " + className + " is abstract; name a concrete class");
        }
        try {
            Constructor<?> constructor = type.getConstructor();
            return (Serde<?>) constructor.newInstance();
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalArgumentException("serde class " + className + " has no public no-argument "
                    + "constructor; give it one (it is configured through configure())", e);
        } catch (InvocationTargetException e) {
            throw new IllegalArgumentException("the constructor of serde class " + className + " threw "
                    + e.getCause(), e.getCause());
        } catch (InstantiationException e) {
            throw new IllegalArgumentException("serde class " + className + " cannot be instantiated: " + e, e);
        }
    }
}
