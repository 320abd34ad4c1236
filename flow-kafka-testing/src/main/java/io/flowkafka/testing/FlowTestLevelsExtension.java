package io.flowkafka.testing;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/**
 * The JUnit 5 extension behind {@link FlowTestLevels}: one invocation per level, resolving
 * {@link FlowTestLevel} and {@link TestNames} parameters. Registered by the annotation; stateless.
 */
public final class FlowTestLevelsExtension implements TestTemplateInvocationContextProvider {
    /** Creates the extension; JUnit calls this. */
    public FlowTestLevelsExtension() {}

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return context.getTestMethod().map(m -> m.isAnnotationPresent(FlowTestLevels.class)).orElse(false);
    }

    @Override
    public boolean mayReturnZeroTestTemplateInvocationContexts(ExtensionContext context) {
        return true;
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        Method method = context.getRequiredTestMethod();
        Class<?> testClass = context.getRequiredTestClass();
        return levels(method, testClass).stream().map(level -> invocation(level, testClass, method.getName()));
    }

    /** The method's levels, restricted to those of the nearest class in the hierarchy that lists some. */
    static List<FlowTestLevel> levels(Method method, Class<?> testClass) {
        List<FlowTestLevel> out = new ArrayList<>(Arrays.asList(method.getAnnotation(FlowTestLevels.class).value()));
        for (Class<?> c = testClass; c != null && c != Object.class; c = c.getSuperclass()) {
            FlowTestLevels only = c.getDeclaredAnnotation(FlowTestLevels.class);
            if (only != null) {
                out.retainAll(Arrays.asList(only.value()));
                break;
            }
        }
        return out;
    }

    private static TestTemplateInvocationContext invocation(FlowTestLevel level, Class<?> testClass, String method) {
        TestNames names = TestNames.of(testClass, method + "-" + level.name().toLowerCase(Locale.ROOT));
        return new TestTemplateInvocationContext() {
            @Override
            public String getDisplayName(int invocationIndex) {
                return "[" + level + "]";
            }

            @Override
            public List<Extension> getAdditionalExtensions() {
                return List.of(new ParameterResolver() {
                    @Override
                    public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
                        Class<?> type = parameter.getParameter().getType();
                        return type == FlowTestLevel.class || type == TestNames.class;
                    }

                    @Override
                    public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
                        return parameter.getParameter().getType() == FlowTestLevel.class ? level : names;
                    }
                });
            }
        };
    }
}
