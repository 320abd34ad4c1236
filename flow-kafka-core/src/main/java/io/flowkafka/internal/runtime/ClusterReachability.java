package io.flowkafka.internal.runtime;

import io.flowkafka.api.FlowException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.KafkaException;

/**
 * The first call a starting runtime makes to its cluster, bounded by {@code flow.bootstrap.timeout.ms}: an
 * unreachable cluster is one sentence naming {@code bootstrap.servers} and what to check, after that bound, rather
 * than the Admin client's minute of retries ({@code default.api.timeout.ms}) and a stack trace.
 *
 * <p>Threading: holds no state; runs on the thread that starts the runtime.
 */
public final class ClusterReachability {
    private ClusterReachability() {
    }

    /**
     * Creates the runtime's Admin client.
     *
     * @throws FlowException in one sentence if {@code bootstrap.servers} is missing or none of them resolves
     */
    public static Admin createAdmin(String pipeline, Map<String, Object> adminProps) {
        try {
            return Admin.create(adminProps);
        } catch (KafkaException e) {
            throw new FlowException("pipeline '" + pipeline + "' cannot connect to Kafka: "
                    + describe(adminProps) + " " + rootMessage(e)
                    + "; check bootstrap.servers (host:port, comma-separated)", e);
        }
    }

    /**
     * Waits up to {@code timeoutMs} for the cluster to answer a metadata request.
     *
     * @throws FlowException in one sentence if it does not answer in time, or refuses the client (authentication,
     *     authorization)
     */
    public static void check(Admin admin, String pipeline, Map<?, ?> clientProps, long timeoutMs) {
        String servers = String.valueOf(clientProps.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        int bound = (int) Math.min(Integer.MAX_VALUE, timeoutMs);
        try {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs(bound)).clusterId()
                    .get(timeoutMs + 1_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("pipeline '" + pipeline + "': interrupted while connecting to Kafka at " + servers,
                    e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof org.apache.kafka.common.errors.TimeoutException || cause instanceof TimeoutException) {
                throw new FlowException("pipeline '" + pipeline + "' cannot reach Kafka at bootstrap.servers="
                        + servers + ": no broker answered within " + human(timeoutMs) + " ("
                        + FLOW_BOOTSTRAP_TIMEOUT + "); check the address, that the brokers run and are reachable "
                        + "from this host, and the security settings (security.protocol, sasl.*, ssl.*)", cause);
            }
            throw new FlowException("pipeline '" + pipeline + "' cannot use Kafka at bootstrap.servers=" + servers
                    + ": " + cause.getMessage() + "; check the security settings (security.protocol, sasl.*, ssl.*) "
                    + "and the client's permissions", cause);
        }
    }

    private static final String FLOW_BOOTSTRAP_TIMEOUT = "flow.bootstrap.timeout.ms";

    private static String describe(Map<String, Object> props) {
        Object servers = props.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        return servers == null ? "bootstrap.servers is not set;" : "bootstrap.servers=" + servers + ":";
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m.endsWith(".") ? m.substring(0, m.length() - 1) : m;
    }

    private static String human(long ms) {
        Duration d = Duration.ofMillis(ms);
        return ms % 1000 == 0 ? d.toSeconds() + " s" : ms + " ms";
    }
}
