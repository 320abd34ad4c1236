package io.flowkafka.testing.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps DESIGN.md's dependency rules for flow-kafka-testing: it uses core's public API and the SPI
 * ({@code io.flowkafka.spi}), never {@code io.flowkafka.internal}. What the toolkit needs from the
 * runtime goes behind the SPI, so the runtime and the toolkit share code instead of copying it. Nor does it
 * use Kafka Streams internals: those are confined to core's {@code io.flowkafka.internal.streams}, where a test
 * pins what they do. ({@code TaskRevival} reaches into TopologyTestDriver's task by reflection, naming no
 * internal type: this rule does not see it; it fails with a message when a Kafka Streams version changes what
 * it reaches.)
 */
class TestingArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.flowkafka.testing");
    }

    @Test
    void shouldUseOnlyTheApiAndTheSpiOfCore() {
        noClasses().that().resideInAPackage("io.flowkafka.testing..")
                .should().dependOnClassesThat().resideInAPackage("io.flowkafka.internal..")
                .because("flow-kafka-testing may use only core's public API and io.flowkafka.spi (DESIGN.md, "
                        + "Dependency rules)")
                .check(classes);
    }

    @Test
    void shouldUseNoKafkaStreamsInternals() {
        noClasses().that().resideInAPackage("io.flowkafka.testing..")
                .should().dependOnClassesThat().resideInAPackage("org.apache.kafka.streams..internals..")
                .because("Kafka Streams internals are confined to core's io.flowkafka.internal.streams (DESIGN.md, "
                        + "Dependency rules)")
                .check(classes);
    }
}
