package io.flowkafka.internal.serde;

import com.google.common.reflect.TypeToken;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Serde;
import org.jspecify.annotations.Nullable;

/**
 * Serdes named by class in a source's or sink's {@code value_serde} parameter: a
 * {@code Serde<GenericRecord>} with a public no-argument constructor (for example
 * {@code io.flowkafka.connectors.registry.ConfluentAvroSerde} from flow-kafka-connectors, or
 * Confluent's {@code io.confluent.kafka.streams.serdes.avro.GenericAvroSerde}). Core only loads
 * and configures the class; it does not depend on any implementation.
 *
 * <p>Configuration: the deployment properties {@code flow.serde.<key>} with the prefix stripped
 * (e.g. {@code flow.serde.schema.registry.url}), overlaid by the entries of the parameter
 * {@code serde_config} (a map) of that source or sink; scalar values are passed as strings.
 *
 * <p>Thread-safe: holds no state.
 */
public final class PluggableSerdes {
    /** Prefix of the deployment properties every pluggable serde receives, prefix stripped. */
    public static final String DEPLOYMENT_PREFIX = io.flowkafka.runtime.FlowConfig.SERDE_PREFIX;

    private PluggableSerdes() {
    }

    /**
     * Why {@code className} cannot serve as a {@code value_serde}, or null if it can: it must
     * load, implement {@link Serde} of {@link GenericRecord} (or of a supertype, or a raw
     * {@code Serde}), be concrete and public and have a public no-argument constructor.
     */
    public static @Nullable String problem(String className) {
        Class<?> type;
        try {
            type = Class.forName(className.strip(), false, classLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return "cannot be loaded (" + e + ")";
        }
        if (!Serde.class.isAssignableFrom(type)) {
            return "does not implement " + Serde.class.getName();
        }
        Class<?> handled = TypeToken.of(type).resolveType(Serde.class.getTypeParameters()[0]).getRawType();
        if (!handled.isAssignableFrom(GenericRecord.class)) {
            return "is a Serde<" + handled.getName() + ">, not a Serde<GenericRecord>";
        }
        if (type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
            return "is abstract and cannot be instantiated";
        }
        if (!Modifier.isPublic(type.getModifiers())) {
            return "is not public";
        }
        try {
            type.getConstructor();
        } catch (NoSuchMethodException e) {
            return "has no public no-argument constructor";
        }
        return null;
    }

    /**
     * Instantiates and configures a serde named by {@code value_serde}.
     *
     * @param owner what uses it, for messages, e.g. {@code source 'events'}
     * @return the configured serde; the caller closes it
     * @throws IllegalArgumentException if the class cannot be used ({@link #problem})
     * @throws RuntimeException whatever the serde's {@code configure} throws for bad settings
     */
    @SuppressWarnings("unchecked")
    public static Serde<Object> create(String className, Map<String, ?> configs, boolean isKey, String owner) {
        Objects.requireNonNull(className, "className");
        String problem = problem(className);
        if (problem != null) {
            throw new IllegalArgumentException(owner + ": value_serde class " + className + " " + problem);
        }
        Serde<Object> serde;
        try {
            serde = (Serde<Object>) Class.forName(className.strip(), true, classLoader()).getConstructor().newInstance();
        } catch (InvocationTargetException e) {
            throw new IllegalArgumentException(owner + ": the constructor of value_serde class " + className + " threw "
                    + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(owner + ": value_serde class " + className + " cannot be instantiated: "
                    + e, e);
        }
        serde.configure(configs, isKey);
        return serde;
    }

    /**
     * Instantiates and configures every {@code value_serde} of {@code spec} once, so that a serde that rejects its
     * configuration fails here, naming the source or sink, rather than failing every task at init.
     *
     * @param deployment the user's properties, whose {@code flow.serde.*} keys configure every serde
     * @throws IllegalArgumentException if a class cannot be used ({@link #problem})
     * @throws ConfigException if a serde rejects its configuration
     */
    public static void checkValueSerdes(PipelineSpec spec, Map<?, ?> deployment) {
        Map<String, Object> byName = new HashMap<>();
        deployment.forEach((k, v) -> byName.put(k.toString(), v));
        for (ComputationSpec c : spec.computations().values()) {
            List<Map.Entry<String, Map<String, Object>>> users = new ArrayList<>();
            c.sourceStreams().forEach(s -> users.add(Map.entry("source '" + s.streamId() + "'", s.parameters())));
            c.sinks().forEach(s -> users.add(Map.entry("sink '" + s.id() + "'", s.parameters())));
            for (var u : users) {
                Object serdeClass = u.getValue().get("value_serde");
                if (serdeClass == null) {
                    continue;
                }
                String owner = "computation '" + c.id() + "', " + u.getKey();
                try {
                    create(serdeClass.toString(), configs(u.getValue().get("serde_config"), byName), false, owner)
                            .close();
                } catch (IllegalArgumentException e) {
                    throw e;
                } catch (RuntimeException e) {
                    throw new ConfigException(owner + ": value_serde " + serdeClass + " rejected its configuration "
                            + "(serde_config over the flow.serde.* properties): " + e.getMessage());
                }
            }
        }
    }

    /**
     * The configuration of a pluggable serde: {@code flow.serde.*} of {@code deployment} with the
     * prefix stripped, overlaid by {@code serdeConfig} (the {@code serde_config} parameter, a map;
     * null for none). Scalar values become strings, so Kafka's {@code ConfigDef} parses them.
     */
    public static Map<String, Object> configs(@Nullable Object serdeConfig, Map<String, ?> deployment) {
        Map<String, Object> out = new HashMap<>();
        deployment.forEach((k, v) -> {
            if (k.startsWith(DEPLOYMENT_PREFIX) && k.length() > DEPLOYMENT_PREFIX.length() && v != null) {
                out.put(k.substring(DEPLOYMENT_PREFIX.length()), scalar(v));
            }
        });
        if (serdeConfig instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                if (k != null && v != null) {
                    out.put(k.toString(), scalar(v));
                }
            });
        }
        return out;
    }

    private static Object scalar(Object v) {
        return v instanceof CharSequence || v instanceof Number || v instanceof Boolean ? v.toString() : v;
    }

    private static ClassLoader classLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : PluggableSerdes.class.getClassLoader();
    }
}
