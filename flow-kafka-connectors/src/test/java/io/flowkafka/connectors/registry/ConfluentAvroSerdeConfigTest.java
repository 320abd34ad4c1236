package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class ConfluentAvroSerdeConfigTest {
    @Test
    void shouldMentionMillisecondsInTheDocOfEveryMsKey() {
        for (ConfigDef.ConfigKey key : ConfluentAvroSerdeConfig.configDef().configKeys().values()) {
            if (key.name.endsWith(".ms")) {
                assertThat(key.documentation).as(key.name).contains("milliseconds");
            }
        }
    }

    @Test
    void shouldRejectUseLatestVersionWithAutoRegistration() {
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("use.latest.version", "true")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("use.latest.version=true needs auto.register.schemas=false");
    }

    @Test
    void shouldSupportOnlyTheTopicNameStrategy() {
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("value.subject.name.strategy",
                "io.confluent.kafka.serializers.subject.RecordNameStrategy")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("value.subject.name.strategy")
                .hasMessageContaining("TopicNameStrategy");
        assertThat(new ConfluentAvroSerdeConfig(Map.of("value.subject.name.strategy",
                ConfluentAvroSerdeConfig.TOPIC_NAME_STRATEGY))).isNotNull();
    }

    @Test
    void shouldCheckTheCredentialsAndTheReaderSchema() {
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("basic.auth.credentials.source", "USER_INFO")))
                .hasMessageContaining("basic.auth.credentials.source=USER_INFO needs basic.auth.user.info");
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("basic.auth.user.info", "secret")))
                .hasMessageContaining("must be user:password").hasMessageNotContaining("secret");
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("flow.avro.reader.schema", "{\"type\":")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("not an Avro schema");
    }

    @Test
    void shouldMakeAClientForTheUrl() {
        assertThat(new ConfluentAvroSerdeConfig(Map.of("schema.registry.url", "mock://config-test")).createClient())
                .isSameAs(MockSchemaRegistry.forScope("config-test"));
        MockSchemaRegistry.dropScope("config-test");
        assertThat(new ConfluentAvroSerdeConfig(Map.of("schema.registry.url", "http://registry:8081",
                "basic.auth.user.info", "u:p")).createClient())
                .isInstanceOfSatisfying(RestSchemaRegistryClient.class,
                        c -> assertThat(c.url()).isEqualTo("http://registry:8081"));
        assertThatThrownBy(() -> new ConfluentAvroSerdeConfig(Map.of("schema.registry.url", "registry:8081"))
                .createClient())
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url");
    }
}
