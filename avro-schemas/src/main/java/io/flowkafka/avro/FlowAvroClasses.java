package io.flowkafka.avro;

import org.apache.avro.util.ClassSecurityValidator;

/**
 * Makes Avro trust flow-kafka's generated classes, so users never have to.
 *
 * <p>Since Avro 1.12.2 (and 1.11.5), a {@code SpecificDatumReader} refuses to load a generated
 * class unless its package is trusted, through the system properties
 * {@code org.apache.avro.SERIALIZABLE_CLASSES}/{@code SERIALIZABLE_PACKAGES} or
 * {@link ClassSecurityValidator#setGlobal}. {@link #trust()} adds the classes of this package
 * ({@code io.flowkafka.avro}, exactly) to the global validator, keeping whatever the application
 * already trusts. flow-kafka calls it before it reads its own records; calling it again does
 * nothing. Your own generated classes still need your own trust setting.
 *
 * <p>Thread-safe.
 */
public final class FlowAvroClasses {
    private static final String PACKAGE = FlowAvroClasses.class.getPackageName();
    private static boolean trusted;

    private FlowAvroClasses() {
    }

    /** Trusts the classes of {@code io.flowkafka.avro} (not its sub-packages). Idempotent. */
    public static synchronized void trust() {
        if (trusted) {
            return;
        }
        ClassSecurityValidator.ClassSecurityPredicate previous = ClassSecurityValidator.getGlobal();
        ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(previous, FlowAvroClasses::isFlowClass));
        trusted = true;
    }

    private static boolean isFlowClass(Class<?> c) {
        Class<?> top = c;
        while (top.getEnclosingClass() != null) {
            top = top.getEnclosingClass();
        }
        return PACKAGE.equals(top.getPackageName());
    }
}
