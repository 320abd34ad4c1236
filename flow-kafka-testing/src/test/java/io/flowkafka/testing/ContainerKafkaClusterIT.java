package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs only where Docker answers; skips cleanly elsewhere. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ContainerKafkaClusterIT {

    @Test
    void shouldAnswerWhetherDockerIsAvailableWithoutThrowing() {
        assertThatCode(ContainerKafkaCluster::isDockerAvailable).doesNotThrowAnyException();
    }

    @Test
    void shouldRoundTripRecordsThroughAContainer() throws Exception {
        assumeTrue(ContainerKafkaCluster.isDockerAvailable(), "needs a Docker engine");
        TestNames names = TestNames.of(ContainerKafkaClusterIT.class, "shouldRoundTrip");
        try (ContainerKafkaCluster cluster = ContainerKafkaCluster.start()) {
            String topic = names.topic("input");
            cluster.createTopic(topic, 2);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                    cluster.clientProperties(), new ByteArraySerializer(), new ByteArraySerializer())) {
                for (String key : List.of("a", "b", "c")) {
                    producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                            new byte[0])).get();
                }
            }

            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(
                    cluster, topic, Set.of("a", "b", "c"), Duration.ofSeconds(30));

            assertThat(report.isExact()).as(report.toString()).isTrue();
        }
    }
}
