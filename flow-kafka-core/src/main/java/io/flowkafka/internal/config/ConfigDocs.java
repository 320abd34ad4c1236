package io.flowkafka.internal.config;

import io.flowkafka.runtime.FlowConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Generates {@code docs/configuration.md} from {@link FlowConfig#configDef()}: every {@code flow.*}
 * property with its type, default, valid values, importance and documentation.
 *
 * <p>Regenerate after changing a property: {@value #REGENERATE}. A test fails when the file differs
 * from {@link #markdown()}.
 */
public final class ConfigDocs {
    /** The command that regenerates the page, run from the repository root. */
    public static final String REGENERATE = "mvn -B -q -pl flow-kafka-core test -Dtest=ConfigDocsTest "
            + "-Dflow.docs.regenerate=true";

    private ConfigDocs() {
    }

    /** Writes the page to {@code args[0]} (default {@code docs/configuration.md}), or prints it with {@code -}. */
    public static void main(String[] args) throws IOException {
        String target = args.length > 0 ? args[0] : "docs/configuration.md";
        if (target.equals("-")) {
            System.out.print(markdown());
            return;
        }
        Path path = Path.of(target);
        if (path.getParent() != null) {
            Files.createDirectories(path.getParent());
        }
        Files.writeString(path, markdown(), StandardCharsets.UTF_8);
        System.out.println("wrote " + path.toAbsolutePath().normalize());
    }

    /** The page: a header, a summary table, then one section per property. */
    public static String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("# Configuration\n\n");
        out.append("<!-- Generated from FlowConfig by io.flowkafka.internal.config.ConfigDocs; do not edit.\n");
        out.append("     Regenerate: ").append(REGENERATE).append(" -->\n\n");
        out.append("Semantics live in the pipeline spec; deployment lives in the `Properties` passed to\n");
        out.append("`FlowRuntime.create`, where the `flow.*` keys below sit beside Kafka's own. Every other key\n");
        out.append("(`bootstrap.servers`, security, `state.dir`, `num.stream.threads`, `producer.`/`consumer.`\n");
        out.append("overrides...) passes through to Kafka Streams unchanged. flow-kafka sets `application.id`\n");
        out.append("(`flow.application.id.prefix` + pipeline name; an `application.id` you set wins, but the CLI\n");
        out.append("and the topic and ACL names in these docs assume prefix + name, so set the prefix instead) and\n");
        out.append("`processing.guarantee=exactly_once_v2`, and\n");
        out.append("defaults `producer.batch.size`, `producer.compression.type=lz4` and\n");
        out.append("`restore.consumer.fetch.max.wait.ms=50` unless you set them (see `FlowRuntime`'s Javadoc).\n");
        out.append("An unknown or malformed `flow.*` value fails `FlowRuntime.create` with a `ConfigException`\n");
        out.append("naming the key.\n\n");

        List<ConfigDef.ConfigKey> keys = sorted();
        out.append("| property | type | default | importance |\n");
        out.append("|---|---|---|---|\n");
        for (ConfigDef.ConfigKey k : keys) {
            out.append("| [`").append(k.name).append("`](#").append(anchor(k.name)).append(") | ")
                    .append(type(k)).append(" | ").append(defaultValue(k)).append(" | ")
                    .append(k.importance.name().toLowerCase(Locale.ROOT)).append(" |\n");
        }
        out.append("| `").append(FlowConfig.SINK_PREFIX).append("<sink id>.*` | prefix | | |\n");
        out.append("| `").append(FlowConfig.SERDE_PREFIX).append("*` | prefix | | |\n");
        out.append('\n');

        out.append("## Properties\n\n");
        for (ConfigDef.ConfigKey k : keys) {
            out.append("### ").append(k.name).append("\n\n");
            out.append(k.documentation == null ? "" : escape(k.documentation.strip())).append("\n\n");
            out.append("- type: ").append(type(k)).append('\n');
            out.append("- default: ").append(defaultValue(k)).append('\n');
            out.append("- valid values: ").append(validValues(k)).append('\n');
            out.append("- importance: ").append(k.importance.name().toLowerCase(Locale.ROOT)).append("\n\n");
        }

        out.append("## Prefixes\n\n");
        out.append("### ").append(FlowConfig.SINK_PREFIX).append("&lt;sink id&gt;.*\n\n");
        out.append(escape(FlowConfig.SINK_PREFIX_DOC)).append("\n\n");
        out.append("### ").append(FlowConfig.SERDE_PREFIX).append("*\n\n");
        out.append(escape(FlowConfig.SERDE_PREFIX_DOC)).append("\n\n");
        out.append("### ").append(FlowConfig.OUTPUT_LIMIT_RECORDS_CONFIG).append(".&lt;stream&gt;\n\n");
        out.append("The output limit of one internal stream, overriding `")
                .append(FlowConfig.OUTPUT_LIMIT_RECORDS_CONFIG).append("` for it; 0 means no limit. A stream the spec does not declare fails FlowRuntime.create.\n");
        return out.toString();
    }

    /** High importance first, then medium, then low; by name within each. */
    private static List<ConfigDef.ConfigKey> sorted() {
        List<ConfigDef.ConfigKey> keys = new ArrayList<>(FlowConfig.configDef().configKeys().values());
        keys.sort(Comparator.comparing((ConfigDef.ConfigKey k) -> k.importance).thenComparing(k -> k.name));
        return keys;
    }

    /** Doc text as Markdown: {@code <pipeline>} and the like would be read as HTML tags. */
    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static String anchor(String name) {
        return name.replace(".", "").toLowerCase(Locale.ROOT);
    }

    private static String type(ConfigDef.ConfigKey k) {
        return k.type.name().toLowerCase(Locale.ROOT);
    }

    private static String defaultValue(ConfigDef.ConfigKey k) {
        if (!k.hasDefault()) {
            return "(required)";
        }
        Object v = k.defaultValue;
        if (v == null) {
            return "null";
        }
        String s = ConfigDef.convertToString(v, k.type);
        return s.isEmpty() ? "`\"\"`" : "`" + s + "`";
    }

    private static String validValues(ConfigDef.ConfigKey k) {
        if (k.validator instanceof ConfigDef.ValidString || k.validator instanceof ConfigDef.CaseInsensitiveValidString) {
            String list = k.validator.toString();
            list = list.substring(list.indexOf('[') + 1, list.lastIndexOf(']'));
            List<String> values = new ArrayList<>();
            for (String v : list.split(",")) {
                values.add("`" + v.strip() + "`");
            }
            return String.join(", ", values);
        }
        if (k.validator instanceof ConfigDef.Range) {
            return k.validator.toString().replace("[", "").replace(",...,", " to ").replace(",...]", " or more").replace("]", "");
        }
        if (k.validator != null) {
            return k.validator.toString();
        }
        return switch (k.type) {
            case BOOLEAN -> "`true`, `false`";
            case STRING -> "any string";
            case INT, SHORT, LONG -> "any integer";
            case DOUBLE -> "any number";
            default -> type(k);
        };
    }
}
