package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka cluster running in this JVM: KRaft nodes started with {@code KafkaRaftServer} over a
 * temporary directory.
 *
 * <p>Prefer one cluster per test JVM, {@link #shared()}, with unique topic names and application
 * ids per test ({@link TestNames}); starting a cluster takes about 2 s cold and 0.5 s warm.
 *
 * <pre>{@code
 * try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start()) {
 *     cluster.createTopic("input", 4);
 *     Properties props = cluster.clientProperties();
 *     ...
 * }
 * }</pre>
 *
 * <p>Layout: one broker runs as a single combined broker-and-controller node (node id 1); {@code n
 * > 1} brokers run as one controller (node id 0) and {@code n} brokers (node ids 1..n). Every
 * listener is PLAINTEXT on {@code localhost} at a free port. Internal topics (consumer offsets,
 * transaction state, share-group state) have replication {@code min(3, n)}, 5 partitions for the
 * first two, and min ISR 1, or 2 with three or more brokers. Topics created through
 * {@link #createTopic} get the same replication. A cluster of several brokers creates its transaction state topic
 * before {@code start} returns and waits until it is in sync. The broker waits up to 1 s, not Kafka's 100 ms, for a
 * transaction's previous markers before it answers a first produce {@code CONCURRENT_TRANSACTIONS}
 * ({@code add.partitions.to.txn.retry.backoff.max.ms=1000}; override it in {@code brokerConfig}).
 *
 * <p>Limitations:
 * <ol>
 *   <li>no security: PLAINTEXT only, no ACLs (see {@link SecureKafkaCluster} for SASL/SCRAM and ACLs);</li>
 *   <li>{@link #stopBroker} is a clean (controlled) shutdown, not a crash: the broker hands its leaderships over
 *       before it stops, and nothing of its log is lost;</li>
 *   <li>the data directory lives under {@code java.io.tmpdir} and is deleted on {@link #close()},
 *       so a killed JVM leaves it behind.</li>
 * </ol>
 *
 * <p>Broker faults: {@link #stopBroker(int)}, {@link #startBroker(int)} and {@link #restartBroker(int)} stop a
 * broker node and start it again on the same port and data directory, so clients keep their
 * {@code bootstrap.servers} and the broker keeps its logs. Node ids are {@code 1..brokers()}. In a one-broker
 * cluster the broker is also the controller: stopping it stops the whole cluster until it starts again. Do this on
 * a cluster of your own, never on the {@link #shared()} one.
 *
 * <pre>{@code
 * try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start(3)) {
 *     cluster.stopBroker(2);   // partitions led by broker 2 move to 1 and 3
 *     ...
 *     cluster.startBroker(2);  // back on its port, with its data; returns once it is registered and unfenced
 * }
 * }</pre>
 *
 * <p>Thread-safe. The caller of {@link #start()} closes the cluster; {@link #shared()} is closed
 * by a shutdown hook. Over 700 lines because it owns the whole node life cycle (format, start, stop, restart,
 * close) of a multi-node KRaft cluster, whose steps share the node list and its locks.
 */
public final class EmbeddedKafkaCluster implements KafkaCluster {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafkaCluster.class);

    /** How long {@link #start} waits for the cluster to answer before failing. */
    public static final Duration STARTUP_BOUND = Duration.ofSeconds(90);

    /**
     * System property selecting the broker's {@code transaction.version} feature level at format
     * time (e.g. {@code 1} for the pre-KIP-890 protocol, as older production clusters run);
     * unset uses the release default.
     */
    public static final String TRANSACTION_VERSION_PROPERTY = "flow.embedded.transaction.version";

    private static final String CONTROLLER_LISTENER = "CONTROLLER";
    private static final String BROKER_LISTENER = "PLAINTEXT";
    private static final int CONTROLLER_ONLY_NODE_ID = 0;
    private static final Duration NODE_SHUTDOWN_BOUND = Duration.ofSeconds(60);

    private static @Nullable EmbeddedKafkaCluster shared;
    private static boolean sharedHookInstalled;

    private final int brokers;
    private final Path dataDir;
    private final List<Node> nodes;
    private final String bootstrapServers;
    private final Admin admin;
    private final Map<String, Object> clientSecurity;
    private final Object closeLock = new Object();
    private volatile boolean closed;

    /** One KRaft node: its fixed identity and configuration, and the server running it, if any. */
    private static final class Node {
        final int id;
        final boolean broker;
        final boolean controller;
        final int brokerPort;
        final KafkaConfig config;
        volatile @Nullable KafkaRaftServer server;

        Node(int id, boolean broker, boolean controller, int brokerPort, KafkaConfig config) {
            this.id = id;
            this.broker = broker;
            this.controller = controller;
            this.brokerPort = brokerPort;
            this.config = config;
            this.server = new KafkaRaftServer(config, Time.SYSTEM);
        }

        int id() {
            return id;
        }

        boolean broker() {
            return broker;
        }

        int brokerPort() {
            return brokerPort;
        }

        boolean running() {
            return server != null;
        }

        /** The running server; a node in the lists handed to start or stop always has one. */
        KafkaRaftServer server() {
            return Objects.requireNonNull(server, () -> "node " + id + " is stopped");
        }
    }

    private EmbeddedKafkaCluster(int brokers, Path dataDir, List<Node> nodes, Admin admin,
            Map<String, Object> clientSecurity) {
        this.brokers = brokers;
        this.clientSecurity = Map.copyOf(clientSecurity);
        this.dataDir = dataDir;
        this.nodes = List.copyOf(nodes);
        this.bootstrapServers = bootstrapServers(nodes);
        this.admin = admin;
    }

    /**
     * Starts a one-broker cluster and waits until it answers.
     *
     * @return a running cluster that the caller closes
     * @throws FlowException if the broker does not start within {@link #STARTUP_BOUND}
     */
    public static EmbeddedKafkaCluster start() {
        return start(1);
    }

    /**
     * Starts a cluster of {@code brokers} brokers and waits until all of them answer.
     *
     * @param brokers at least 1; more than one adds a separate controller node
     * @return a running cluster that the caller closes
     * @throws IllegalArgumentException if {@code brokers < 1}
     * @throws FlowException if the cluster does not start within {@link #STARTUP_BOUND}
     */
    public static EmbeddedKafkaCluster start(int brokers) {
        return start(brokers, Map.of());
    }

    /**
     * Starts a cluster of {@code brokers} brokers with extra broker configuration and waits until
     * all of them answer.
     *
     * @param brokers at least 1; more than one adds a separate controller node
     * @param brokerConfig entries that override the defaults on every node, such as
     *     {@code log.retention.ms}; may be empty
     * @return a running cluster that the caller closes
     * @throws IllegalArgumentException if {@code brokers < 1}
     * @throws org.apache.kafka.common.config.ConfigException if Kafka rejects the configuration
     * @throws FlowException if the cluster does not start within {@link #STARTUP_BOUND}
     */
    public static EmbeddedKafkaCluster start(int brokers, Map<String, String> brokerConfig) {
        return start(brokers, brokerConfig, List.of(), Map.of());
    }

    /**
     * Starts a cluster whose broker listener is secured, for {@link SecureKafkaCluster}.
     *
     * @param scramCredentials {@code SCRAM-SHA-512=[name=...,password=...]} entries written into the metadata log
     *     at format time, so the brokers and the cluster's Admin can authenticate before any Admin call
     * @param clientSecurity client entries ({@code security.protocol}, {@code sasl.*}) that the cluster's Admin and
     *     {@link #clientProperties()} use
     */
    static EmbeddedKafkaCluster start(int brokers, Map<String, String> brokerConfig, List<String> scramCredentials,
            Map<String, Object> clientSecurity) {
        Objects.requireNonNull(brokerConfig, "brokerConfig");
        if (brokers < 1) {
            throw new IllegalArgumentException("brokers must be >= 1 but was " + brokers);
        }
        Path dataDir;
        try {
            dataDir = Files.createTempDirectory("flowkafka-kraft-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary data directory", e);
        }
        List<Node> nodes = new ArrayList<>();
        Admin admin = null;
        try {
            createNodes(brokers, dataDir, brokerConfig, scramCredentials, nodes);
            startNodes(nodes);
            Properties adminProps = clientProperties(bootstrapServers(nodes), "flowkafka-embedded-admin");
            adminProps.putAll(clientSecurity);
            admin = Admin.create(adminProps);
            Admin a = admin;
            Await.poll(STARTUP_BOUND, brokers + " broker(s) registered and unfenced at "
                            + bootstrapServers(nodes),
                    () -> describedBrokers(a), n -> n >= brokers, true, FlowException::new);
            if (brokers > 1) {
                settleTransactionState(a, bootstrapServers(nodes), clientSecurity, brokers);
            }
            log.info("Kafka cluster with {} broker(s) started at {}", brokers, bootstrapServers(nodes));
            return new EmbeddedKafkaCluster(brokers, dataDir, nodes, admin, clientSecurity);
        } catch (RuntimeException | Error e) {
            if (admin != null) {
                admin.close(Duration.ZERO);
            }
            stopNodes(nodes);
            deleteQuietly(dataDir);
            throw e;
        }
    }

    /**
     * The one-broker cluster shared by this JVM, started on first use.
     *
     * <p>A JVM shutdown hook closes it. Do not close it yourself; if someone does, the next call
     * starts a new one.
     *
     * @return the running shared cluster
     * @throws FlowException if the broker does not start within {@link #STARTUP_BOUND}
     */
    public static synchronized EmbeddedKafkaCluster shared() {
        EmbeddedKafkaCluster current = shared;
        if (current == null || current.isClosed()) {
            current = start();
            shared = current;
            if (!sharedHookInstalled) {
                Runtime.getRuntime().addShutdownHook(new Thread(
                        EmbeddedKafkaCluster::closeShared, "flowkafka-shared-cluster-shutdown"));
                sharedHookInstalled = true;
            }
        }
        return current;
    }

    private static void closeShared() {
        EmbeddedKafkaCluster current;
        synchronized (EmbeddedKafkaCluster.class) {
            current = shared;
            shared = null;
        }
        if (current != null) {
            current.close();
        }
    }

    /**
     * Runs a cluster until standard input closes or the process is killed.
     *
     * <p>Prints {@code bootstrap.servers=<host:port,...>} on standard output once the cluster
     * answers; logs go wherever the SLF4J binding sends them. Arguments: an optional broker count
     * (default 1), and {@code --until-killed} to ignore standard input (needed when it is
     * {@code /dev/null}). Exits with 0 after a clean stop and 2 on bad arguments.
     *
     * <pre>{@code
     * java -cp "$(cat classpath.txt)" io.flowkafka.testing.EmbeddedKafkaCluster 1 --until-killed
     * }</pre>
     *
     * @param args {@code [brokers] [--until-killed]}
     * @throws IOException if reading standard input fails
     * @throws InterruptedException if interrupted while waiting to be killed
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        int brokers = 1;
        boolean untilKilled = false;
        for (String arg : args) {
            if (arg.equals("--until-killed")) {
                untilKilled = true;
            } else if (arg.matches("[1-9][0-9]{0,2}")) {
                brokers = Integer.parseInt(arg);
            } else {
                System.err.println("unknown argument '" + arg
                        + "'; usage: EmbeddedKafkaCluster [brokers] [--until-killed]");
                System.exit(2);
            }
        }
        EmbeddedKafkaCluster cluster = start(brokers);
        Runtime.getRuntime().addShutdownHook(
                new Thread(cluster::close, "flowkafka-embedded-cluster-shutdown"));
        System.out.println("bootstrap.servers=" + cluster.bootstrapServers());
        System.out.flush();
        if (untilKilled) {
            new CountDownLatch(1).await();
        }
        System.in.transferTo(OutputStream.nullOutputStream());
        cluster.close();
        System.exit(0);
    }

    @Override
    public String bootstrapServers() {
        checkOpen();
        return bootstrapServers;
    }

    /**
     * The number of brokers, not counting a separate controller node.
     *
     * @return the number of brokers
     */
    public int brokers() {
        return brokers;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The replication factor is {@code min(3, brokers())}.
     */
    @Override
    public void createTopic(String name, int partitions, Map<String, String> config) {
        Topics.create(admin(), name, partitions, (short) Math.min(3, brokers), config);
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
        props.putAll(clientSecurity);
        return props;
    }

    /**
     * Stops broker {@code nodeId} with a clean (controlled) shutdown and waits until it has stopped; its port and data
     * directory are kept for {@link #startBroker(int)}.
     *
     * <p>In a one-broker cluster, node 1 is also the controller: the whole cluster stops answering until it starts
     * again. In a larger cluster the controller (node 0) stays up and moves the broker's leaderships to the others.
     *
     * @param nodeId a broker node id, {@code 1..brokers()}
     * @throws IllegalArgumentException if {@code nodeId} names no broker of this cluster
     * @throws IllegalStateException if the broker is already stopped, or the cluster is closed
     * @throws FlowException if the broker does not stop within {@link #STARTUP_BOUND}
     */
    public void stopBroker(int nodeId) {
        synchronized (closeLock) {
            checkOpen();
            Node node = brokerNode(nodeId);
            if (!node.running()) {
                throw new IllegalStateException("broker " + nodeId + " of " + this + " is already stopped");
            }
            long startNanos = System.nanoTime();
            KafkaRaftServer server = node.server();
            node.server = null;
            runBounded("stop broker " + nodeId, () -> {
                server.shutdown();
                server.awaitShutdown();
            });
            log.info("Kafka broker {} at localhost:{} stopped in {} ms", nodeId, node.brokerPort(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        }
    }

    /**
     * Starts a stopped broker again, on the same port and over the same data directory, and waits until the cluster
     * lists it (registered and unfenced).
     *
     * @param nodeId a broker node id, {@code 1..brokers()}, stopped by {@link #stopBroker(int)}
     * @throws IllegalArgumentException if {@code nodeId} names no broker of this cluster
     * @throws IllegalStateException if the broker is running, or the cluster is closed
     * @throws FlowException if the broker does not start and register within {@link #STARTUP_BOUND}
     */
    public void startBroker(int nodeId) {
        synchronized (closeLock) {
            checkOpen();
            Node node = brokerNode(nodeId);
            if (node.running()) {
                throw new IllegalStateException("broker " + nodeId + " of " + this + " is already running");
            }
            long startNanos = System.nanoTime();
            KafkaRaftServer server = new KafkaRaftServer(node.config, Time.SYSTEM);
            node.server = server;
            runBounded("start broker " + nodeId, server::startup);
            Await.poll(STARTUP_BOUND, "broker " + nodeId + " registered and unfenced at localhost:"
                            + node.brokerPort(),
                    () -> describedBrokerIds(admin), ids -> ids.contains(nodeId), true, FlowException::new);
            log.info("Kafka broker {} at localhost:{} started again in {} ms", nodeId, node.brokerPort(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        }
    }

    /**
     * Stops broker {@code nodeId} and starts it again: {@link #stopBroker(int)} then {@link #startBroker(int)}.
     *
     * @param nodeId a running broker's node id, {@code 1..brokers()}
     * @throws IllegalArgumentException if {@code nodeId} names no broker of this cluster
     * @throws IllegalStateException if the broker is stopped, or the cluster is closed
     * @throws FlowException if the broker does not stop, or start and register, within {@link #STARTUP_BOUND} each
     */
    public void restartBroker(int nodeId) {
        synchronized (closeLock) {
            stopBroker(nodeId);
            startBroker(nodeId);
        }
    }

    /**
     * Whether broker {@code nodeId} runs: true from start until {@link #stopBroker(int)}, and again after
     * {@link #startBroker(int)}.
     *
     * @param nodeId a broker node id, {@code 1..brokers()}
     * @return whether the broker's server runs
     * @throws IllegalArgumentException if {@code nodeId} names no broker of this cluster
     */
    public boolean isBrokerRunning(int nodeId) {
        return brokerNode(nodeId).running();
    }

    private Node brokerNode(int nodeId) {
        return nodes.stream().filter(n -> n.broker() && n.id() == nodeId).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no broker with node id " + nodeId + " in " + this
                        + "; broker node ids are 1.." + brokers));
    }

    private static void runBounded(String what, Runnable action) {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "flowkafka-embedded-" + what.replace(' ', '-'));
            t.setDaemon(true);
            return t;
        });
        try {
            Future<?> f = pool.submit(action);
            f.get(STARTUP_BOUND.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new FlowException("cannot " + what + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new FlowException("cannot " + what + " within " + Await.format(STARTUP_BOUND), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while trying to " + what, e);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Whether {@link #close()} has been called.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed;
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
        long startNanos = System.nanoTime();
        admin.close(Duration.ofSeconds(5));
        stopNodes(nodes.stream().filter(Node::running).toList());
        deleteQuietly(dataDir);
        log.info("Kafka cluster at {} stopped in {} ms", bootstrapServers,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    }

    @Override
    public String toString() {
        return "EmbeddedKafkaCluster[" + bootstrapServers + ", brokers=" + brokers + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the Kafka cluster at " + bootstrapServers
                    + " is closed; start a new one");
        }
    }

    private static void createNodes(int brokers, Path dataDir, Map<String, String> overrides,
            List<String> scramCredentials, List<Node> nodes) {
        boolean combined = brokers == 1;
        int[] ports = freePorts(brokers + 1);
        int controllerPort = ports[brokers];
        int controllerId = combined ? 1 : CONTROLLER_ONLY_NODE_ID;
        String voters = controllerId + "@localhost:" + controllerPort;
        String clusterId = Uuid.randomUuid().toString();
        if (!combined) {
            nodes.add(createNode(controllerId, false, true, -1, controllerPort, voters, clusterId,
                    dataDir, brokers, overrides, scramCredentials));
        }
        for (int i = 0; i < brokers; i++) {
            nodes.add(createNode(i + 1, true, combined, ports[i], controllerPort, voters,
                    clusterId, dataDir, brokers, overrides, scramCredentials));
        }
    }

    private static Node createNode(int id, boolean broker, boolean controller, int brokerPort,
            int controllerPort, String voters, String clusterId, Path dataDir, int brokers,
            Map<String, String> overrides, List<String> scramCredentials) {
        Path dir = dataDir.resolve("node-" + id);
        Properties props = new Properties();
        props.put("process.roles", broker && controller ? "broker,controller"
                : controller ? "controller" : "broker");
        props.put("node.id", Integer.toString(id));
        props.put("controller.quorum.voters", voters);
        props.put("controller.listener.names", CONTROLLER_LISTENER);
        props.put("listener.security.protocol.map",
                BROKER_LISTENER + ":PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
        List<String> listeners = new ArrayList<>();
        if (broker) {
            listeners.add(BROKER_LISTENER + "://localhost:" + brokerPort);
            props.put("advertised.listeners", BROKER_LISTENER + "://localhost:" + brokerPort);
            props.put("inter.broker.listener.name", BROKER_LISTENER);
        }
        if (controller) {
            listeners.add(CONTROLLER_LISTENER + "://localhost:" + controllerPort);
        }
        props.put("listeners", String.join(",", listeners));
        props.put("log.dirs", dir.toString());
        props.put("metadata.log.dir", dir.toString());
        String replication = Integer.toString(Math.min(3, brokers));
        String minIsr = brokers >= 3 ? "2" : "1";
        props.put("offsets.topic.replication.factor", replication);
        props.put("offsets.topic.num.partitions", "5");
        props.put("transaction.state.log.replication.factor", replication);
        props.put("transaction.state.log.min.isr", minIsr);
        props.put("transaction.state.log.num.partitions", "5");
        props.put("share.coordinator.state.topic.replication.factor", replication);
        props.put("share.coordinator.state.topic.min.isr", minIsr);
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("log.cleaner.dedupe.buffer.size", "2097152");
        // transactions v2: a loaded broker writing the last transaction's markers for over 100 ms answers the next
        // transaction's first produce CONCURRENT_TRANSACTIONS, then the requests behind it out of sequence (retried;
        // RELIABILITY.md); waiting up to 1 s spares tests those retries
        props.put("add.partitions.to.txn.retry.backoff.max.ms", "1000");
        // a killed instance's open transaction holds read_committed readers until the broker aborts it: at its
        // timeout, found by a sweep every 10 s by default; sweeping every second ends that wait closer to the timeout
        props.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
        props.putAll(overrides);

        KafkaConfig config = KafkaConfig.fromProps(props, false);
        format(id, clusterId, dir, scramCredentials);
        return new Node(id, broker, controller, brokerPort, config);
    }

    private static void format(int nodeId, String clusterId, Path dir, List<String> scramCredentials) {
        try {
            Files.createDirectories(dir);
            Formatter formatter = new Formatter();
            String transactionVersion = System.getProperty(TRANSACTION_VERSION_PROPERTY);
            if (transactionVersion != null) {
                formatter.setFeatureLevel("transaction.version", Short.parseShort(transactionVersion.trim()));
            }
            formatter
                    .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                    .setNodeId(nodeId)
                    .setClusterId(clusterId)
                    .setDirectories(List.of(dir.toString()))
                    .setMetadataLogDirectory(dir.toString())
                    .setReleaseVersion(MetadataVersion.latestProduction())
                    .setControllerListenerName(CONTROLLER_LISTENER)
                    .setScramArguments(scramCredentials)
                    .run();
        } catch (Exception e) {
            throw new FlowException("cannot format KRaft node " + nodeId + " in " + dir, e);
        }
    }

    /** Starts controllers first, then brokers in parallel: a broker's startup blocks until it has
     * caught up with the controller's metadata. */
    private static void startNodes(List<Node> nodes) {
        long deadline = System.nanoTime() + STARTUP_BOUND.toNanos();
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "flowkafka-embedded-startup");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Node> controllersOnly = nodes.stream().filter(n -> !n.broker()).toList();
            List<Node> withBroker = nodes.stream().filter(Node::broker).toList();
            awaitAll(submitAll(pool, controllersOnly, n -> n.server().startup()), deadline);
            awaitAll(submitAll(pool, withBroker, n -> n.server().startup()), deadline);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Stops brokers in parallel, then controllers, each with a bound; logs what fails. */
    private static void stopNodes(List<Node> nodes) {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "flowkafka-embedded-shutdown");
            t.setDaemon(true);
            return t;
        });
        try {
            for (boolean brokerRole : new boolean[] {true, false}) {
                List<Node> batch = nodes.stream().filter(n -> n.broker() == brokerRole).toList();
                long deadline = System.nanoTime() + NODE_SHUTDOWN_BOUND.toNanos();
                try {
                    awaitAll(submitAll(pool, batch, n -> {
                        n.server().shutdown();
                        n.server().awaitShutdown();
                    }), deadline);
                } catch (RuntimeException e) {
                    log.warn("Kafka node(s) {} did not stop cleanly",
                            batch.stream().map(Node::id).toList(), e);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private interface NodeAction {
        void run(Node node) throws Exception;
    }

    private static List<Future<?>> submitAll(ExecutorService pool, List<Node> batch, NodeAction action) {
        List<Future<?>> futures = new ArrayList<>();
        for (Node node : batch) {
            futures.add(pool.submit(() -> {
                action.run(node);
                return null;
            }));
        }
        return futures;
    }

    private static void awaitAll(List<Future<?>> futures, long deadlineNanos) {
        try {
            for (Future<?> f : futures) {
                f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new FlowException("Kafka node failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new FlowException("Kafka node(s) did not start or stop within "
                    + Await.format(STARTUP_BOUND), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while starting or stopping Kafka nodes", e);
        }
    }

    private static Set<Integer> describedBrokerIds(Admin admin) {
        try {
            return admin.describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
                    .nodes().get().stream().map(n -> n.id()).collect(Collectors.toSet());
        } catch (ExecutionException e) {
            return Set.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while waiting for the Kafka cluster", e);
        }
    }

    /**
     * Creates the transaction state topic of a multi-broker cluster and waits until each of its partitions has a
     * leader and every replica in sync: a first transaction that raced the topic's creation on a fresh cluster was
     * once refused {@code INVALID_TXN_STATE} by its coordinator.
     */
    private static void settleTransactionState(Admin admin, String bootstrapServers, Map<String, Object> security,
            int brokers) {
        Properties props = clientProperties(bootstrapServers, "flowkafka-embedded-settle");
        props.putAll(security);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "flowkafka-embedded-settle");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) STARTUP_BOUND.toMillis());
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
        }
        int replicas = Math.min(3, brokers);
        Await.poll(STARTUP_BOUND, "every partition of " + Topic.TRANSACTION_STATE_TOPIC_NAME + " led and in sync",
                () -> transactionStateSettled(admin, replicas), settled -> settled, true, FlowException::new);
    }

    private static boolean transactionStateSettled(Admin admin, int replicas) {
        try {
            TopicDescription d = admin.describeTopics(List.of(Topic.TRANSACTION_STATE_TOPIC_NAME)).allTopicNames()
                    .get().get(Topic.TRANSACTION_STATE_TOPIC_NAME);
            return d != null && d.partitions().stream()
                    .allMatch(p -> p.leader() != null && p.isr().size() == replicas && p.replicas().size() == replicas);
        } catch (ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while waiting for the Kafka cluster", e);
        }
    }

    private static int describedBrokers(Admin admin) {
        try {
            return admin.describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
                    .nodes().get().size();
        } catch (ExecutionException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while waiting for the Kafka cluster", e);
        }
    }

    private static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket(0);
                s.setReuseAddress(true);
                sockets.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find free ports", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // the port is still free for our purpose
                }
            }
        }
    }

    private static String bootstrapServers(List<Node> nodes) {
        return nodes.stream().filter(Node::broker).map(n -> "localhost:" + n.brokerPort())
                .collect(Collectors.joining(","));
    }

    private static Properties clientProperties(String bootstrapServers, String clientId) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return props;
    }

    private static void deleteQuietly(Path dir) {
        try {
            Utils.delete(dir.toFile());
        } catch (IOException e) {
            log.warn("cannot delete Kafka data directory {}", dir, e);
        }
    }
}
