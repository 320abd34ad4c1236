package io.flowkafka.testing;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;

/**
 * A one-broker Kafka cluster in a Docker container, started with Testcontainers'
 * {@code org.testcontainers.kafka.KafkaContainer}.
 *
 * <p>Use it where Docker exists and the broker must run outside the test JVM, for example to
 * test against a released broker image. Add {@code org.testcontainers:testcontainers-kafka} to
 * your test dependencies: flow-kafka-testing declares it optional. Skip tests cleanly without
 * Docker with {@link #isDockerAvailable()} or {@code @Testcontainers(disabledWithoutDocker = true)}.
 *
 * <pre>{@code
 * assumeTrue(ContainerKafkaCluster.isDockerAvailable(), "needs Docker");
 * try (ContainerKafkaCluster cluster = ContainerKafkaCluster.start()) {
 *     cluster.createTopic("input", 4);
 * }
 * }</pre>
 *
 * <p>Thread-safe. The caller of {@link #start()} closes the cluster, which removes the container.
 */
public final class ContainerKafkaCluster implements KafkaCluster {
    /** The image {@link #start()} runs: Apache Kafka at the version flow-kafka builds against. */
    public static final String DEFAULT_IMAGE = "apache/kafka:4.4.0";

    private final KafkaContainerHandle container;
    private final String bootstrapServers;
    private final Admin admin;
    private final Object closeLock = new Object();
    private volatile boolean closed;

    private ContainerKafkaCluster(KafkaContainerHandle container) {
        this.container = container;
        this.bootstrapServers = container.bootstrapServers();
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "flowkafka-container-admin");
        this.admin = Admin.create(props);
    }

    /**
     * Whether a Docker engine answers, so that containers can start.
     *
     * <p>Never throws: returns false when Docker is missing or when Testcontainers is not on the
     * class path.
     *
     * @return true if containers can start
     */
    public static boolean isDockerAvailable() {
        try {
            return KafkaContainerHandle.isDockerAvailable();
        } catch (Throwable e) {
            return false;
        }
    }

    /**
     * Starts a container from {@link #DEFAULT_IMAGE} and waits until the broker is ready.
     *
     * @return a running cluster that the caller closes
     * @throws IllegalStateException if Docker is not available
     * @throws RuntimeException Testcontainers' {@code ContainerLaunchException} if the container
     *     does not start
     * @throws NoClassDefFoundError if Testcontainers is not on the class path
     */
    public static ContainerKafkaCluster start() {
        return start(DEFAULT_IMAGE);
    }

    /**
     * Starts a container from the given image and waits until the broker is ready.
     *
     * @param image an {@code apache/kafka} or {@code apache/kafka-native} image, such as
     *     {@code "apache/kafka-native:4.1.0"}
     * @return a running cluster that the caller closes
     * @throws IllegalArgumentException if Testcontainers does not support the image
     * @throws IllegalStateException if Docker is not available
     * @throws RuntimeException Testcontainers' {@code ContainerLaunchException} if the container
     *     does not start
     * @throws NoClassDefFoundError if Testcontainers is not on the class path
     */
    public static ContainerKafkaCluster start(String image) {
        Objects.requireNonNull(image, "image");
        KafkaContainerHandle container = new KafkaContainerHandle(image);
        container.start();
        try {
            return new ContainerKafkaCluster(container);
        } catch (RuntimeException e) {
            container.close();
            throw e;
        }
    }

    @Override
    public String bootstrapServers() {
        checkOpen();
        return bootstrapServers;
    }

    /** {@inheritDoc} <p>The replication factor is 1. */
    @Override
    public void createTopic(String name, int partitions, Map<String, String> config) {
        Topics.create(admin(), name, partitions, (short) 1, config);
    }

    @Override
    public Admin admin() {
        checkOpen();
        return admin;
    }

    @Override
    public Properties clientProperties() {
        checkOpen();
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return props;
    }

    @Override
    public void close() {
        synchronized (closeLock) { // a second caller, such as a shutdown hook, waits for the first
            if (closed) {
                return;
            }
            closed = true;
            doClose();
        }
    }

    private void doClose() {
        try {
            admin.close(Duration.ofSeconds(5));
        } finally {
            container.close();
        }
    }

    @Override
    public String toString() {
        return "ContainerKafkaCluster[" + bootstrapServers + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the Kafka container at " + bootstrapServers
                    + " is closed; start a new one");
        }
    }
}
