package io.flowkafka.benchmarks;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * HTTP requests per second through {@code TAsyncHttpSink} vs a plain JDK {@link HttpClient} loop posting the same
 * bodies to the same loopback server with the same number of requests in flight, side by side in one run (one JVM:
 * the in-JVM broker, the server, the pipeline or the loop).
 *
 * <ul>
 *   <li>{@code plain}: {@code --concurrency} threads each sending {@code POST}s one after the other (the bodies the
 *       pipeline posts, an {@code Idempotency-Key} each) until {@code --messages} were answered;</li>
 *   <li>{@code sink}: the same messages written to a topic beforehand, a pipeline (source -> forward ->
 *       {@code TAsyncHttpSink} with {@code concurrency} = {@code --concurrency}) started; reported twice: requests/s
 *       from the first request the server saw to the last ({@code sink}), and from the runtime's start
 *       ({@code sink+pipeline}: processing, epoch commits and the outbox included).</li>
 * </ul>
 * The server answers 200 at once (or after {@code --service-us}), so the figures are the client side's cost.
 *
 * <p>Run: {@code benchmarks/run-http-sink.sh} (options: {@code --help}).
 */
public final class HttpSinkBenchmark {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("bench").fields()
            .requiredString("id").requiredString("user").endRecord();

    private int messages = 20_000;
    private int concurrency = 4;
    private int partitions = 4;
    private int runs = 1;
    private long serviceMicros;

    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final AtomicLong firstNanos = new AtomicLong();
    private final AtomicLong lastNanos = new AtomicLong();
    private final AtomicInteger requests = new AtomicInteger();

    private HttpSinkBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        HttpSinkBenchmark b = new HttpSinkBenchmark();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("options: --messages N (20000) --concurrency C (4, requests in flight) "
                        + "--partitions P (4) --runs R (1) --service-us U (0, server time per request)");
                return;
            }
            String v = args[++i];
            switch (a) {
                case "--messages" -> b.messages = Integer.parseInt(v);
                case "--concurrency" -> b.concurrency = Integer.parseInt(v);
                case "--partitions" -> b.partitions = Integer.parseInt(v);
                case "--runs" -> b.runs = Integer.parseInt(v);
                case "--service-us" -> b.serviceMicros = Long.parseLong(v);
                default -> throw new IllegalArgumentException("unknown option " + a + " (see --help)");
            }
        }
        b.run();
        System.exit(0);
    }

    private void run() throws Exception {
        System.out.printf("HTTP sink benchmark: %d messages, concurrency %d, %d partitions, %d run(s), service %d us; "
                + "%s, Java %s, %d cores%n", messages, concurrency, partitions, runs, serviceMicros,
                System.getProperty("bench.built.from", "build unknown"), System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        ExecutorService serverThreads = Executors.newFixedThreadPool(Math.max(8, concurrency * 2));
        server.setExecutor(serverThreads);
        server.createContext("/", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes();
                if (serviceMicros > 0) {
                    long until = System.nanoTime() + serviceMicros * 1000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
                exchange.sendResponseHeaders(200, -1);
                long now = System.nanoTime();
                firstNanos.compareAndSet(0, now);
                lastNanos.set(now);
                requests.incrementAndGet();
                seen.add(new String(body, StandardCharsets.UTF_8));
            }
        });
        server.start();
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/events");
        List<String> bodies = new ArrayList<>(messages);
        for (int i = 0; i < messages; i++) {
            bodies.add("{\"id\":\"e" + i + "\",\"user\":\"u" + (i % 1000) + "\"}");
        }
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start()) {
            for (int round = 1; round <= runs; round++) {
                double plain = plain(uri, bodies);
                double[] sink = sink(cluster, uri, bodies, round);
                System.out.printf("run %d: plain HttpClient loop %,.0f req/s | TAsyncHttpSink %,.0f req/s "
                        + "(sink+pipeline from start %,.0f msg/s) | sink/plain %.2f%n", round, plain, sink[0], sink[1],
                        sink[0] / plain);
            }
        } finally {
            server.stop(0);
            serverThreads.shutdownNow();
        }
    }

    private void reset() {
        seen.clear();
        firstNanos.set(0);
        lastNanos.set(0);
        requests.set(0);
    }

    /** Requests/s of {@code concurrency} threads posting the bodies with one JDK client. */
    private double plain(URI uri, List<String> bodies) throws Exception {
        reset();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        long start = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < concurrency; t++) {
            fs.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < bodies.size(); i = next.getAndIncrement()) {
                    HttpRequest r = HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                            .header("Idempotency-Key", Integer.toHexString(i))
                            .POST(HttpRequest.BodyPublishers.ofString(bodies.get(i))).build();
                    HttpResponse<Void> resp = client.send(r, HttpResponse.BodyHandlers.discarding());
                    if (resp.statusCode() != 200) {
                        throw new IllegalStateException("HTTP " + resp.statusCode());
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        long nanos = System.nanoTime() - start;
        pool.shutdown();
        return bodies.size() / (nanos / 1e9);
    }

    /** {sink requests/s from the first request to the last, messages/s from the runtime's start}. */
    private double[] sink(EmbeddedKafkaCluster cluster, URI uri, List<String> bodies, int round) throws Exception {
        reset();
        String name = "http-bench-" + round + "-" + UUID.randomUUID().toString().substring(0, 8);
        String input = name + ".input";
        cluster.createTopic(input, partitions, Map.of());
        Properties pp = cluster.clientProperties();
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        pp.put("linger.ms", "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < bodies.size(); i++) {
                producer.send(new ProducerRecord<>(input, "u" + (i % 1000), bodies.get(i)));
            }
        }
        Properties props = cluster.clientProperties();
        Path state = Files.createTempDirectory("http-bench");
        props.put("state.dir", state.toString());
        props.put("commit.interval.ms", "100");
        Map<String, Object> sink = Map.of("url", uri.toString(), "key_column", "user", "concurrency", concurrency,
                "max_batch_records", 500);
        long start = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(spec(name, input, sink), props)) {
            runtime.start();
            long deadline = System.nanoTime() + 600_000_000_000L;
            while (seen.size() < bodies.size()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + seen.size() + " of " + bodies.size() + " posted");
                }
                Thread.sleep(20); // the driver polls the server's count; the sink itself never sleeps
            }
        }
        long end = lastNanos.get();
        double sinkRate = requests.get() / ((end - firstNanos.get()) / 1e9);
        double all = bodies.size() / ((end - start) / 1e9);
        return new double[] {sinkRate, all};
    }

    private PipelineSpec spec(String name, String input, Map<String, Object> sink) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT)
                .stream("events", EVENT)
                .stream("posted", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events"))
                .computation("forward", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(Forward::new)
                        .outputStreamIds("posted")
                        .sink("web", "TAsyncHttpSink", List.of("posted"), sink)
                        .desiredPartitionCount(partitions))
                .build();
    }

    /** One output per input, the same fields. */
    public static final class Forward implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("posted")
                    .set("id", message.getPayload().get("id").toString())
                    .set("user", message.getPayload().get("user").toString()).build());
        }
    }
}
