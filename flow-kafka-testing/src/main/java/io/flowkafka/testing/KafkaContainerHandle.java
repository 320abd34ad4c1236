package io.flowkafka.testing;

import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Keeps every Testcontainers type out of {@link ContainerKafkaCluster}'s own bytecode, so that
 * {@link ContainerKafkaCluster#isDockerAvailable()} works without Testcontainers on the class
 * path.
 */
final class KafkaContainerHandle implements AutoCloseable {
    private final KafkaContainer container;

    KafkaContainerHandle(String image) {
        this.container = new KafkaContainer(DockerImageName.parse(image));
    }

    void start() {
        container.start();
    }

    String bootstrapServers() {
        return container.getBootstrapServers();
    }

    @Override
    public void close() {
        container.stop();
    }

    static boolean isDockerAvailable() {
        return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
    }
}
