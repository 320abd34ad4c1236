package io.flowkafka.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
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

    @Test
    void shouldNameNoInternalTypeInPublicSignatures() {
        methods().that().arePublic().and().areDeclaredInClassesThat()
                .resideInAnyPackage("io.flowkafka.api..", "io.flowkafka.spec..", "io.flowkafka.runtime..", "io.flowkafka.spi..")
                .and().areDeclaredInClassesThat().arePublic()
                .should(new ArchCondition<JavaMethod>("name no io.flowkafka.internal type in their signature") {
                    @Override
                    public void check(JavaMethod method, ConditionEvents events) {
                        boolean bad = method.getRawReturnType().getPackageName().startsWith("io.flowkafka.internal")
                                || method.getRawParameterTypes().stream()
                                        .map(JavaClass::getPackageName).anyMatch(p -> p.startsWith("io.flowkafka.internal"));
                        if (bad) {
                            events.add(SimpleConditionEvent.violated(method, method.getFullName() + " names an internal type"));
                        }
                    }
                })
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
