package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;

/**
 * A one-broker in-JVM Kafka cluster with encryption, authentication and authorization: the client listener speaks
 * {@code SASL_SSL} (TLS with a self-signed certificate for {@code localhost} made at start, {@link TlsMaterial})
 * with {@code SCRAM-SHA-512}, and the {@code StandardAuthorizer} denies whatever no ACL allows. It owns the cluster's principals: one super user ({@link #ADMIN_USER}, whose credential is written at
 * format time, since nobody could create it otherwise) that the cluster's {@link #admin() Admin} and
 * {@link #clientProperties()} use, and the users a test adds with {@link #createUser} (through
 * {@code Admin.alterUserScramCredentials}) and grants ACLs to.
 *
 * <pre>{@code
 * try (SecureKafkaCluster cluster = SecureKafkaCluster.start()) {
 *     cluster.createUser("app", "app-secret");
 *     cluster.grant(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "in", PatternType.LITERAL),
 *             SecureKafkaCluster.allow("app", AclOperation.READ))));
 *     Properties props = cluster.clientProperties("app", "app-secret");
 *     ...
 * }
 * }</pre>
 *
 * <p>Limitations:
 * <ol>
 *   <li>the certificate is self-signed: {@link #clientProperties(String, String)} trusts it through a trust store
 *       of its own ({@code ssl.truststore.*}); no client certificates (TLS encrypts, SCRAM authenticates);</li>
 *   <li>one broker; the controller listener stays PLAINTEXT (its principal {@code User:ANONYMOUS} is a super
 *       user, as the broker-to-controller traffic needs);</li>
 *   <li>ACLs reach the broker through the metadata log: {@link #grant} and {@link #revokeAll} wait until the
 *       broker answers with the new set.</li>
 * </ol>
 *
 * <p>Thread-safe. The caller of {@link #start()} closes it.
 */
public final class SecureKafkaCluster implements KafkaCluster {
    /** The super user that the cluster's Admin and {@link #clientProperties()} authenticate as. */
    public static final String ADMIN_USER = "flow-admin";
    /** The SASL mechanism of the client listener. */
    public static final String MECHANISM = "SCRAM-SHA-512";

    private static final Duration ACL_BOUND = Duration.ofSeconds(30);
    private static final int SCRAM_ITERATIONS = 4096;

    private final EmbeddedKafkaCluster cluster;
    private final TlsMaterial tls;

    private SecureKafkaCluster(EmbeddedKafkaCluster cluster, TlsMaterial tls) {
        this.cluster = cluster;
        this.tls = tls;
    }

    /**
     * Starts the secured one-broker cluster and waits until its super user can describe it.
     *
     * @return a running cluster that the caller closes
     * @throws FlowException if the broker does not start within {@link EmbeddedKafkaCluster#STARTUP_BOUND}
     */
    public static SecureKafkaCluster start() {
        TlsMaterial tls;
        try {
            tls = TlsMaterial.create(Files.createTempDirectory("flowkafka-tls-"));
        } catch (IOException e) {
            throw new FlowException("cannot make a directory for the broker's TLS key: " + e.getMessage(), e);
        }
        String adminPassword = "admin-" + java.util.UUID.randomUUID();
        String jaas = jaas(ADMIN_USER, adminPassword);
        Map<String, String> broker = new HashMap<>(Map.of(
                // the broker listener keeps EmbeddedKafkaCluster's name PLAINTEXT but speaks SASL_SSL
                "listener.security.protocol.map", "PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
                "sasl.enabled.mechanisms", MECHANISM,
                "sasl.mechanism.inter.broker.protocol", MECHANISM,
                "listener.name.plaintext.scram-sha-512.sasl.jaas.config", jaas,
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users", "User:" + ADMIN_USER + ";User:ANONYMOUS",
                "allow.everyone.if.no.acl.found", "false"));
        broker.putAll(Map.of(
                "ssl.keystore.type", "PKCS12",
                "ssl.keystore.location", tls.keyStore().toString(),
                "ssl.keystore.password", tls.password(),
                "ssl.key.password", tls.password(),
                // the broker's own connections to itself (transaction markers) trust its certificate
                "ssl.truststore.type", "PKCS12",
                "ssl.truststore.location", tls.trustStore().toString(),
                "ssl.truststore.password", tls.password()));
        List<String> scram = List.of(MECHANISM + "=[name=" + ADMIN_USER + ",password=" + adminPassword + "]");
        try {
            return new SecureKafkaCluster(EmbeddedKafkaCluster.start(1, broker, scram,
                    saslClient(tls, ADMIN_USER, adminPassword)), tls);
        } catch (RuntimeException e) {
            tls.delete();
            throw e;
        }
    }

    /**
     * Adds a SCRAM-SHA-512 user, or changes its password, through {@code Admin.alterUserScramCredentials}.
     *
     * @param user the user name, the principal {@code User:<user>}
     * @param password its password
     * @throws FlowException if the broker does not store the credential within 30 s
     */
    public void createUser(String user, String password) {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(password, "password");
        call("store the SCRAM credential of " + user, () -> admin().alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512,
                        SCRAM_ITERATIONS), password))).all().get(ACL_BOUND.toSeconds(), TimeUnit.SECONDS));
    }

    /**
     * An allow entry for {@code User:<user>} from any host.
     *
     * @param user the user name
     * @param operation the operation allowed
     * @return the entry
     */
    public static AccessControlEntry allow(String user, AclOperation operation) {
        return new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW);
    }

    /**
     * Creates the ACLs and waits until the broker reports every one of them.
     *
     * @param acls the bindings to add; may be empty
     * @throws FlowException if the broker does not report them within 30 s
     */
    public void grant(Collection<AclBinding> acls) {
        if (acls.isEmpty()) {
            return;
        }
        call("create " + acls.size() + " ACL(s)", () -> admin().createAcls(acls).all()
                .get(ACL_BOUND.toSeconds(), TimeUnit.SECONDS));
        Await.until(ACL_BOUND, "the broker reports the " + acls.size() + " new ACL(s)",
                () -> described(AclBindingFilter.ANY).containsAll(acls));
    }

    /**
     * Deletes every ACL of {@code User:<user>} and waits until the broker reports none.
     *
     * @param user the user name
     * @throws FlowException if the broker still reports some after 30 s
     */
    public void revokeAll(String user) {
        AclBindingFilter filter = new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                "User:" + user, null, AclOperation.ANY, AclPermissionType.ANY));
        call("delete the ACLs of " + user, () -> admin().deleteAcls(List.of(filter)).all()
                .get(ACL_BOUND.toSeconds(), TimeUnit.SECONDS));
        Await.until(ACL_BOUND, "the broker reports no ACL of " + user, () -> described(filter).isEmpty());
    }

    /**
     * The ACLs the broker reports for {@code filter}.
     *
     * @param filter which bindings
     * @return the bindings
     */
    public Set<AclBinding> described(AclBindingFilter filter) {
        return call("describe ACLs", () -> Set.copyOf(admin().describeAcls(filter).values()
                .get(ACL_BOUND.toSeconds(), TimeUnit.SECONDS)));
    }

    /**
     * Client properties that authenticate as {@code user}.
     *
     * @param user the user name
     * @param password its password
     * @return a new properties object with {@code bootstrap.servers}, {@code security.protocol} and {@code sasl.*}
     */
    public Properties clientProperties(String user, String password) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        props.putAll(saslClient(tls, user, password));
        return props;
    }

    /**
     * {@inheritDoc}
     *
     * <p>They authenticate as the super user {@link #ADMIN_USER}.
     */
    @Override
    public Properties clientProperties() {
        return cluster.clientProperties();
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public void createTopic(String name, int partitions, Map<String, String> config) {
        cluster.createTopic(name, partitions, config);
    }

    /**
     * {@inheritDoc}
     *
     * <p>It authenticates as the super user {@link #ADMIN_USER}.
     */
    @Override
    public Admin admin() {
        return cluster.admin();
    }

    @Override
    public void close() {
        try {
            cluster.close();
        } finally {
            tls.delete();
        }
    }

    @Override
    public String toString() {
        return "SecureKafkaCluster[" + cluster.bootstrapServers() + ", SASL_SSL, " + MECHANISM + "]";
    }

    private static Map<String, Object> saslClient(TlsMaterial tls, String user, String password) {
        return Map.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL",
                SaslConfigs.SASL_MECHANISM, MECHANISM,
                SaslConfigs.SASL_JAAS_CONFIG, jaas(user, password),
                SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12",
                SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, tls.trustStore().toString(),
                SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, tls.password());
    }

    private static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }

    private interface AdminCall<T> {
        T run() throws Exception;
    }

    private static <T> T call(String what, AdminCall<T> call) {
        try {
            return call.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while trying to " + what, e);
        } catch (ExecutionException e) {
            throw new FlowException("could not " + what + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new FlowException("could not " + what + " within " + Await.format(ACL_BOUND), e);
        } catch (Exception e) {
            throw new FlowException("could not " + what + ": " + e, e);
        }
    }

    /**
     * Allow bindings of {@code operations} on one resource pattern for {@code User:<user>}.
     *
     * @param user the user name
     * @param pattern the resource pattern
     * @param operations the operations allowed
     * @return one binding per operation
     */
    public static List<AclBinding> bindings(String user, ResourcePattern pattern, Collection<AclOperation> operations) {
        List<AclBinding> out = new ArrayList<>();
        for (AclOperation op : operations) {
            out.add(new AclBinding(pattern, allow(user, op)));
        }
        return out;
    }
}
