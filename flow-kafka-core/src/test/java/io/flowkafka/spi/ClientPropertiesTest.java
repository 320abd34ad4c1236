package io.flowkafka.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ClientPropertiesTest {
    private static Properties props() {
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:9092");
        p.put("security.protocol", "SASL_SSL");
        p.put("group.id", "someone-else");
        p.put("fetch.max.wait.ms", "50");
        p.put("application.id", "app");
        p.put("producer.batch.size", "262144");
        p.put("flow.topic.prefix", "x.");
        p.put("flow.internal.object", new Object());
        return p;
    }

    @Test
    void shouldKeepOnlyAdminConfigs() {
        assertThat(ClientProperties.admin(props())).isEqualTo(Map.of("bootstrap.servers", "localhost:9092",
                "security.protocol", "SASL_SSL"));
    }

    @Test
    void shouldKeepOnlyConsumerConfigsWithoutTheGroup() {
        assertThat(ClientProperties.consumer(props())).isEqualTo(Map.of("bootstrap.servers", "localhost:9092",
                "security.protocol", "SASL_SSL", "fetch.max.wait.ms", "50"));
    }

    @Test
    void shouldKeepOnlyProducerConfigsWithoutTheTransactionalId() {
        Properties p = props();
        p.put("transactional.id", "someone-elses");
        p.put("acks", "1");
        assertThat(ClientProperties.producer(p)).isEqualTo(Map.of("bootstrap.servers", "localhost:9092",
                "security.protocol", "SASL_SSL", "acks", "1"));
    }

    @Test
    void shouldRankPrefixedConsumerSettingsAsKafkaStreamsDoesForItsMainConsumer() {
        Properties p = props();
        p.put("session.timeout.ms", "45000");
        p.put("consumer.session.timeout.ms", "10000");
        p.put("heartbeat.interval.ms", "3000");
        p.put("consumer.heartbeat.interval.ms", "2000");
        p.put("main.consumer.heartbeat.interval.ms", "1000");
        p.put("consumer.group.id", "not-ours");
        p.put("restore.consumer.max.poll.records", "7");
        assertThat(ClientProperties.mainConsumer(p)).isEqualTo(Map.of("bootstrap.servers", "localhost:9092",
                "security.protocol", "SASL_SSL", "fetch.max.wait.ms", "50", "session.timeout.ms", "10000",
                "heartbeat.interval.ms", "1000"));
    }

    @Test
    void shouldReturnAMapTheCallerMayChange() {
        Map<String, Object> admin = ClientProperties.admin(props());
        admin.put("client.id", "mine");
        assertThat(admin).containsEntry("client.id", "mine");
    }

    /** {@code group.protocol=streams} is Kafka Streams' own; a plain consumer refuses it, so the pipeline failed to start. */
    @Test
    void shouldNotGiveTheStreamsGroupProtocolToConsumers() {
        Properties p = props();
        p.put("group.protocol", "Streams");
        assertThat(ClientProperties.consumer(p)).doesNotContainKey("group.protocol");
        assertThat(ClientProperties.mainConsumer(p)).doesNotContainKey("group.protocol");
        p.put("main.consumer.group.protocol", "streams");
        assertThat(ClientProperties.mainConsumer(p)).doesNotContainKey("group.protocol");
        p.put("group.protocol", "consumer");
        p.remove("main.consumer.group.protocol");
        assertThat(ClientProperties.consumer(p)).containsEntry("group.protocol", "consumer");
    }
}
