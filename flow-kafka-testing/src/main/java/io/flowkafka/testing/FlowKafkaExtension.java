package io.flowkafka.testing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives tests the JVM-wide {@link EmbeddedKafkaCluster#shared() shared}
 * Kafka broker and per-test {@link TestNames}.
 *
 * <p>Register it with {@link WithKafka} or {@code @ExtendWith(FlowKafkaExtension.class)}. It
 * injects:
 * <ul>
 *   <li>{@link KafkaCluster} (or {@link EmbeddedKafkaCluster}): into constructor, test-method and
 *       lifecycle-method parameters, and, before each test, into instance fields of that type that
 *       are still null;</li>
 *   <li>{@link TestNames} for the current test: into constructor and test-method parameters, and,
 *       before each test, into every instance field of that type. In {@code @BeforeAll} and
 *       {@code @AfterAll} methods, and in constructors of {@code PER_CLASS} test classes, it names
 *       the class only.</li>
 * </ul>
 * Injected fields must not be final or static. The broker starts on first use, about 2 s, and
 * stops when the JVM exits; never close it in a test. Every injection point of one test receives
 * the same {@code TestNames}.
 *
 * <p>Stateless apart from JUnit's store; safe for parallel test execution.
 */
public final class FlowKafkaExtension implements ParameterResolver, BeforeEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(FlowKafkaExtension.class);

    /** Creates the extension; JUnit calls this. */
    public FlowKafkaExtension() {}

    /** Asks JUnit for the method-level context in constructors, so they see the test's name. */
    @Override
    public ExtensionContextScope getTestInstantiationExtensionContextScope(ExtensionContext root) {
        return ExtensionContextScope.TEST_METHOD;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == KafkaCluster.class || type == EmbeddedKafkaCluster.class
                || type == TestNames.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        if (type == TestNames.class) {
            return testNames(context);
        }
        try {
            return EmbeddedKafkaCluster.shared();
        } catch (RuntimeException e) {
            throw new ParameterResolutionException("cannot start the shared Kafka broker", e);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IllegalAccessException {
        for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
            for (Class<?> c = instance.getClass(); c != Object.class; c = c.getSuperclass()) {
                for (Field field : c.getDeclaredFields()) {
                    inject(field, instance, context);
                }
            }
        }
    }

    private static void inject(Field field, Object instance, ExtensionContext context)
            throws IllegalAccessException {
        int modifiers = field.getModifiers();
        if (Modifier.isStatic(modifiers) || Modifier.isFinal(modifiers)) {
            return;
        }
        Class<?> type = field.getType();
        if (type == TestNames.class) {
            field.setAccessible(true);
            field.set(instance, testNames(context));
        } else if (type == KafkaCluster.class || type == EmbeddedKafkaCluster.class) {
            field.setAccessible(true);
            if (field.get(instance) == null) {
                field.set(instance, EmbeddedKafkaCluster.shared());
            }
        }
    }

    private static TestNames testNames(ExtensionContext context) {
        String method = context.getTestMethod().map(m -> m.getName()).orElse(null);
        Class<?> testClass = context.getRequiredTestClass();
        return context.getStore(NAMESPACE).getOrComputeIfAbsent(
                TestNames.class, k -> TestNames.of(testClass, method), TestNames.class);
    }
}
