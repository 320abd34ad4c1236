package io.flowkafka.testing;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Unique topic names and application ids for one test, so that tests can share a broker.
 *
 * <p>A name is {@code <TestClass>-<testMethod>-<suffix>-<n>}, for example
 * {@code topic("input")} in {@code ShouldCountIT.shouldCount} returns
 * {@code ShouldCountIT-shouldCount-input-1}. {@code n} counts, across this JVM, the names made for
 * the same class and method, so every call returns a new name (keep it in a variable) and
 * repeated or parameterized invocations of a test do not collide. Characters outside Kafka's
 * {@code [a-zA-Z0-9._-]} become {@code _}; names longer than {@value #MAX_LENGTH} characters are
 * shortened and keep a hash of the full name and the counter.
 *
 * <p>{@link FlowKafkaExtension} injects one per test; build others with {@link #of}.
 * Thread-safe.
 */
public final class TestNames {
    /** The longest name returned, which leaves room for Kafka Streams' internal topic suffixes. */
    public static final int MAX_LENGTH = 200;

    private static final Pattern ILLEGAL = Pattern.compile("[^a-zA-Z0-9._-]");
    private static final ConcurrentMap<String, AtomicInteger> COUNTERS = new ConcurrentHashMap<>();

    private final String prefix;

    private TestNames(String prefix) {
        this.prefix = prefix;
    }

    /**
     * Names for a test method, or for a whole class when {@code methodName} is null (for use in
     * {@code @BeforeAll}).
     *
     * @param testClass the test class; its simple name is used
     * @param methodName the test method's name, or null
     * @return the names for that test
     */
    public static TestNames of(Class<?> testClass, @Nullable String methodName) {
        Objects.requireNonNull(testClass, "testClass");
        return of(simpleName(testClass), methodName);
    }

    /**
     * Names for a test identified by strings.
     *
     * @param className a non-empty class name
     * @param methodName the test method's name, or null
     * @return the names for that test
     * @throws IllegalArgumentException if {@code className} is empty
     */
    public static TestNames of(String className, @Nullable String methodName) {
        Objects.requireNonNull(className, "className");
        if (className.isEmpty()) {
            throw new IllegalArgumentException("className must not be empty");
        }
        return new TestNames(sanitize(methodName == null ? className : className + "-" + methodName));
    }

    /**
     * A new unique topic name ending in {@code -<suffix>-<n>}.
     *
     * @param suffix what the topic is for, such as {@code "input"}
     * @return the topic name
     */
    public String topic(String suffix) {
        return name(suffix);
    }

    /**
     * A new unique Kafka Streams {@code application.id} (also usable as a consumer group id)
     * ending in {@code -<suffix>-<n>}.
     *
     * @param suffix what the application is, such as {@code "app"}
     * @return the application id
     */
    public String applicationId(String suffix) {
        return name(suffix);
    }

    /**
     * A new unique application id with the suffix {@code app}.
     *
     * @return the application id
     */
    public String applicationId() {
        return name("app");
    }

    /**
     * A new unique name ending in {@code -<suffix>-<n>}, for anything else that must not collide
     * between tests, such as a {@code transactional.id}.
     *
     * @param suffix what the name is for; may be empty
     * @return the name
     */
    public String name(String suffix) {
        Objects.requireNonNull(suffix, "suffix");
        int n = COUNTERS.computeIfAbsent(prefix, k -> new AtomicInteger()).incrementAndGet();
        String tail = (suffix.isEmpty() ? "" : "-" + sanitize(suffix)) + "-" + n;
        String full = prefix + tail;
        if (full.length() <= MAX_LENGTH) {
            return full;
        }
        String hash = "-" + Integer.toHexString(full.hashCode());
        int keep = MAX_LENGTH - hash.length() - ("-" + n).length();
        String body = (prefix + tail.substring(0, tail.length() - ("-" + n).length()));
        return body.substring(0, keep) + hash + "-" + n;
    }

    /**
     * The {@code <TestClass>-<testMethod>} part shared by every name.
     *
     * @return the prefix
     */
    public String prefix() {
        return prefix;
    }

    @Override
    public String toString() {
        return "TestNames[" + prefix + "]";
    }

    private static String sanitize(String s) {
        return ILLEGAL.matcher(s).replaceAll("_");
    }

    private static String simpleName(Class<?> c) {
        String simple = c.getSimpleName();
        if (!simple.isEmpty()) {
            return simple;
        }
        String name = c.getName();
        return name.substring(name.lastIndexOf('.') + 1);
    }
}
