package io.flowkafka.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * The options that name a pipeline on a cluster, shared by the commands that talk to Kafka: bootstrap servers,
 * pipeline name, the application-id and topic prefixes the pipeline runs with, and a client properties file (as
 * Kafka's own tools take, for SASL/TLS). Keeps the rule that the CLI derives names exactly as the runtime does:
 * application.id = prefix + pipeline, topics = topic prefix + pipeline + "." + ...
 */
final class ClusterOptions {
    @Option(names = {"-b", "--bootstrap-servers"}, required = true, paramLabel = "HOST:PORT[,...]",
            description = "the Kafka cluster the pipeline runs on")
    String bootstrapServers;

    @Option(names = {"-p", "--pipeline"}, required = true, paramLabel = "NAME",
            description = "the pipeline's name (the spec's \"name\")")
    String pipeline;

    @Option(names = "--application-id-prefix", defaultValue = "", paramLabel = "PREFIX",
            description = "the pipeline's flow.application.id.prefix (default: none)")
    String applicationIdPrefix;

    @Option(names = "--topic-prefix", defaultValue = "", paramLabel = "PREFIX",
            description = "the pipeline's flow.topic.prefix (default: none)")
    String topicPrefix;

    @Option(names = "--command-config", paramLabel = "FILE",
            description = "client properties (security.protocol, sasl.*, ssl.*) for the admin client")
    @Nullable Path commandConfig;

    String applicationId() {
        return applicationIdPrefix + pipeline;
    }

    /** The prefix of the topics flow-kafka names for this pipeline: {@code <topic prefix><pipeline>.}. */
    String topicNamePrefix() {
        return topicPrefix + pipeline + ".";
    }

    Properties clientProperties() throws IOException {
        Properties props = new Properties();
        if (commandConfig != null) {
            if (!Files.isReadable(commandConfig)) {
                throw new IllegalArgumentException("--command-config " + commandConfig + ": no such readable file");
            }
            try (InputStream in = Files.newInputStream(commandConfig)) {
                props.load(in);
            }
        }
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        props.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.putIfAbsent(CommonClientConfigs.CLIENT_ID_CONFIG, "flow-kafka-cli");
        return props;
    }

    /**
     * An admin client for the cluster, once the cluster answered: an unreachable cluster is one clear sentence
     * (exit 1) after at most 15 s, not a retry loop.
     */
    Admin admin() throws IOException {
        Admin admin = Admin.create(clientProperties());
        try {
            admin.describeCluster().clusterId().get(15, TimeUnit.SECONDS);
            return admin;
        } catch (TimeoutException | ExecutionException e) {
            admin.close(Duration.ZERO);
            throw new IllegalStateException("cannot reach the Kafka cluster at " + bootstrapServers + " within 15 s"
                    + (e instanceof ExecutionException && e.getCause() != null ? " (" + e.getCause().getMessage()
                    + ")" : "") + "; check --bootstrap-servers and --command-config");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            admin.close(Duration.ZERO);
            throw new IllegalStateException("interrupted while connecting to " + bootstrapServers);
        }
    }
}
