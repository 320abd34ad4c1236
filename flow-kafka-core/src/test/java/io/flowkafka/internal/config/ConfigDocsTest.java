package io.flowkafka.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.flowkafka.runtime.FlowConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/** docs/configuration.md is what {@link ConfigDocs} generates from {@link FlowConfig}. */
class ConfigDocsTest {
    /** The module's working directory is flow-kafka-core/. */
    private static final Path DOC = Path.of("..", "docs", "configuration.md");

    @Test
    void shouldMatchTheCommittedConfigurationPage() throws IOException {
        String generated = ConfigDocs.markdown();
        if (Boolean.getBoolean("flow.docs.regenerate")) {
            Files.writeString(DOC, generated, StandardCharsets.UTF_8);
        }
        String committed = Files.exists(DOC) ? Files.readString(DOC, StandardCharsets.UTF_8) : "";
        if (!committed.equals(generated)) {
            fail("docs/configuration.md differs from what FlowConfig generates; regenerate it from the repository "
                    + "root with:\n  " + ConfigDocs.REGENERATE + "\nand commit it.");
        }
    }

    @Test
    void shouldDocumentEveryPropertyWithTypeDefaultAndValidValues() {
        String page = ConfigDocs.markdown();
        for (ConfigDef.ConfigKey key : FlowConfig.configDef().configKeys().values()) {
            assertThat(key.documentation).as(key.name).isNotBlank();
            assertThat(page).as(key.name)
                    .contains("### " + key.name + "\n\n" + ConfigDocs.escape(key.documentation.strip()));
        }
        assertThat(page).contains("&lt;prefix&gt;&lt;pipeline&gt;.dlq")
                .contains("- valid values: `create`, `check`")
                .contains("- valid values: 1 or more")
                .contains("| [`flow.topics.mode`](#flowtopicsmode) | string | `create` | high |")
                .contains("### flow.sink.&lt;sink id&gt;.*");
    }
}
