package io.flowkafka.internal.processor;

import io.flowkafka.api.ProcessFunction;
import io.flowkafka.spec.ComputationSpec;
import org.jspecify.annotations.Nullable;

/** Creates a computation's process function, one instance per task. */
final class FunctionFactory {
    private FunctionFactory() {
    }

    static @Nullable ProcessFunction create(ComputationSpec spec) {
        if (spec.functionSupplier() != null) {
            ProcessFunction f = spec.functionSupplier().get();
            if (f == null) {
                throw new IllegalStateException("the processing_function supplier of computation '" + spec.id()
                        + "' returned null; it must return a new instance on each call");
            }
            return f;
        }
        if (spec.processingFunction() == null) {
            return null;
        }
        try {
            Class<?> c = Class.forName(spec.processingFunction(), true, Thread.currentThread().getContextClassLoader() != null
                    ? Thread.currentThread().getContextClassLoader() : FunctionFactory.class.getClassLoader());
            return (ProcessFunction) c.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("cannot create processing_function " + spec.processingFunction()
                    + " of computation '" + spec.id() + "': " + e, e);
        }
    }
}
