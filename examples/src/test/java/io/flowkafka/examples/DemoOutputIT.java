package io.flowkafka.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.examples.waitclick.WaitClickDemo;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * What a new user sees of {@code ./demo.sh}: the wait-click demo in its own JVM, with the demo's logging (the
 * {@code simplelogger.properties} the examples ship, which the test class path shadows with its own), prints its
 * progress and result as plain text: no terminal escape codes, no broker ERROR or WARN lines.
 */
class DemoOutputIT {
    @Test
    void shouldPrintPlainTextWithoutBrokerLogLines() throws Exception {
        Properties demoLogging = new Properties();
        try (InputStream in = Files.newInputStream(Path.of("src/main/resources/simplelogger.properties"))) {
            demoLogging.load(in);
        }
        ChildJvm.Builder builder = ChildJvm.builder(WaitClickDemo.class).args("--impressions", "500").maxHeap("512m");
        // slf4j-simple reads system properties before its file: the child logs as the shipped demo does
        demoLogging.stringPropertyNames().forEach(k -> builder.systemProperty(k, demoLogging.getProperty(k)));
        try (ChildJvm demo = builder.start()) {
            Await.until(Duration.ofMinutes(3), "the demo exits", () -> demo.exitCode().isPresent());
            String output = Files.readString(demo.logFile(), StandardCharsets.UTF_8);
            assertThat(demo.exitCode()).as(output).hasValue(0);
            assertThat(output).doesNotContain("\u001b");
            List<String> lines = output.lines().toList();
            assertThat(lines).contains("Starting an in-JVM Kafka broker (KRaft)...");
            assertThat(lines).as("progress while it runs").anyMatch(l -> l.matches(
                    " +[A-Z]+ +\\d+% of the input committed \\([\\d,]+ of [\\d,]+ records\\)"));
            assertThat(lines).as("the summary at the end").anyMatch(l -> l.startsWith("completed in "));
            assertThat(lines).as("where the status page is").anyMatch(l -> l.matches(
                    "Status page: http://[^ ]+:\\d+/ \\(while it runs\\)"));
            assertThat(lines).last().asString().startsWith("OK: every impression got exactly one result");
            assertThat(lines).noneMatch(l -> l.contains("ERROR") || l.contains("WARN") || l.startsWith("\tat "));
        }
    }
}
