package io.flowkafka.connectors.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps DESIGN.md's dependency rules for flow-kafka-connectors: it uses core's public API and the SPI
 * ({@code io.flowkafka.spi}), never {@code io.flowkafka.internal}, and no Kafka Streams internals (those are
 * confined to core's {@code io.flowkafka.internal.streams}, where a test pins what they do).
 */
class ConnectorsArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.flowkafka.connectors");
    }

    @Test
    void shouldUseOnlyTheApiAndTheSpiOfCore() {
        noClasses().that().resideInAPackage("io.flowkafka.connectors..")
                .should().dependOnClassesThat().resideInAPackage("io.flowkafka.internal..")
                .because("flow-kafka-connectors may use only core's public API and io.flowkafka.spi (DESIGN.md, "
                        + "Dependency rules)")
                .check(classes);
    }

    @Test
    void shouldUseNoKafkaStreamsInternals() {
        noClasses().that().resideInAPackage("io.flowkafka.connectors..")
                .should().dependOnClassesThat().resideInAPackage("org.apache.kafka.streams..internals..")
                .because("Kafka Streams internals are confined to core's io.flowkafka.internal.streams (DESIGN.md, "
                        + "Dependency rules)")
                .check(classes);
    }
}
