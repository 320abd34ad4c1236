package io.flowkafka.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Keeps DESIGN.md's dependency rules: a broken rule fails the build. */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.flowkafka");
    }

    @Test
    void shouldKeepTheProcessFunctionApiFreeOfInternals() {
        noClasses().that().resideInAPackage("io.flowkafka.api..")
                .should().dependOnClassesThat().resideInAPackage("io.flowkafka.internal..")
                .check(classes);
    }

    /**
     * The public API names no internal type: not in a public method's return, parameter or thrown types, nor in
     * their type arguments and bounds (a {@code List<InternalThing>} leaks as much as an {@code InternalThing}),
     * nor in a public constructor's parameters, a public field's type, a record's components, or a public
     * class's supertypes.
     */
    @Test
    void shouldNameNoInternalTypeInPublicSignatures() {
        classes().that().resideInAnyPackage("io.flowkafka.api..", "io.flowkafka.spec..", "io.flowkafka.runtime..",
                        "io.flowkafka.spi..")
                .and().arePublic()
                .should(new ArchCondition<JavaClass>("name no io.flowkafka.internal type in their public signatures") {
                    @Override
                    public void check(JavaClass c, ConditionEvents events) {
                        c.getSuperclass().ifPresent(t -> report(c, c.getName() + " extends", t, events));
                        c.getInterfaces().forEach(t -> report(c, c.getName() + " implements", t, events));
                        for (JavaMethod m : c.getMethods()) {
                            if (isPublicApi(m)) {
                                report(m, m.getFullName() + " returns", m.getReturnType(), events);
                                m.getParameterTypes().forEach(t -> report(m, m.getFullName() + " takes", t, events));
                                m.getThrowsClause().getTypes().forEach(t -> report(m, m.getFullName() + " throws", t, events));
                                m.getTypeParameters().forEach(t -> report(m, m.getFullName() + " has type parameter", t, events));
                            }
                        }
                        for (JavaConstructor k : c.getConstructors()) {
                            if (isPublicApi(k)) {
                                k.getParameterTypes().forEach(t -> report(k, k.getFullName() + " takes", t, events));
                                k.getThrowsClause().getTypes().forEach(t -> report(k, k.getFullName() + " throws", t, events));
                            }
                        }
                        for (JavaField f : c.getFields()) {
                            boolean component = c.isRecord() && !f.getModifiers().contains(JavaModifier.STATIC);
                            if (isPublicApi(f) || component) {
                                report(f, f.getFullName() + (component ? " (record component)" : "") + " is of type",
                                        f.getType(), events);
                            }
                        }
                    }
                })
                .check(classes);
    }

    private static boolean isPublicApi(JavaMember member) {
        return member.getModifiers().contains(JavaModifier.PUBLIC) && !member.getModifiers().contains(JavaModifier.SYNTHETIC)
                && !member.getModifiers().contains(JavaModifier.BRIDGE);
    }

    /** Reports each internal type {@code type} involves: itself, its type arguments, bounds and array components. */
    private static void report(Object owner, String what, JavaType type, ConditionEvents events) {
        for (JavaClass raw : type.getAllInvolvedRawTypes()) {
            if (raw.getPackageName().startsWith("io.flowkafka.internal")) {
                events.add(SimpleConditionEvent.violated(owner, what + " " + type.getName() + ", naming the internal type "
                        + raw.getName()));
            }
        }
    }

    /**
     * Kafka Streams' internals (no compatibility promise) are used in one package, whose classes say what they rely
     * on and whose {@code KafkaStreamsInternalsTest} pins it: an upgrade of Kafka Streams is checked there.
     */
    @Test
    void shouldUseKafkaStreamsInternalsOnlyInInternalStreams() {
        noClasses().that().resideOutsideOfPackage("io.flowkafka.internal.streams..")
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.kafka.streams.processor.internals..",
                        "org.apache.kafka.streams.state.internals..",
                        "org.apache.kafka.streams..internals..") // the others too: kstream, errors, query, ...
                .because("Kafka Streams internals are confined to io.flowkafka.internal.streams (DESIGN.md, Dependency rules)")
                .check(classes);
    }

    @Test
    void shouldUseRocksDbOnlyInStateInternals() {
        noClasses().that().resideOutsideOfPackage("io.flowkafka.internal.state..")
                .should().dependOnClassesThat().resideInAPackage("org.rocksdb..")
                .check(classes);
    }

    @Test
    void shouldKeepTheRuntimeFreeOfTestingCode() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.junit..", "org.apache.kafka.streams.TopologyTestDriver")
                .check(classes);
    }
}
