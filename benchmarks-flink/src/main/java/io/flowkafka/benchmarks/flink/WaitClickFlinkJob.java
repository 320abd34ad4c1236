package io.flowkafka.benchmarks.flink;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The wait-click join as a Flink 2.2 job in a local {@link MiniCluster}: two bounded Kafka sources
 * (impressions, clicks; event time from the payload's {@code ts}, bounded out-of-orderness 1 min and
 * 1 min idleness, as flow-kafka's default watermark strategy) -> union -> keyBy(impression_id) ->
 * {@link WaitClickFunction} (RocksDB state, event-time timers) -> Kafka sink (exactly-once by
 * default, {@code transaction.timeout.ms=900000}), checkpoints every second, parallelism 2.
 *
 * <p>Started by the wait-click benchmark driver in a JVM of its own (Flink's RocksDB must not share
 * a JVM with Kafka Streams'). It starts the MiniCluster first, then prints {@code T0 <epoch ms>}
 * just before it submits the job, and {@code FINISHED <status> <epoch ms>} when the job ends (the
 * bounded sources reached the end offsets they saw at start, the final watermark fired every timer,
 * the final checkpoint committed the sink's transactions). With the system property {@code wcj.warmup}
 * ({@code impressionsTopic,clicksTopic,resultsTopic}) it first runs the same job over those topics on the
 * same MiniCluster and prints {@code WARM <status> <epoch ms>}.
 *
 * <p>Arguments: {@code bootstrap impressionsTopic clicksTopic resultsTopic runId workDir} and options
 * {@code --parallelism N} (2), {@code --checkpoint-ms N} (1000), {@code --guarantee
 * exactly-once|at-least-once} (exactly-once).
 */
public final class WaitClickFlinkJob {
    /** The same property as the driver's {@code WaitClickVsFlink.WARM_UP_PROPERTY}. */
    static final String WARM_UP_PROPERTY = "wcj.warmup";

    private WaitClickFlinkJob() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: WaitClickFlinkJob bootstrap impressionsTopic clicksTopic resultsTopic runId workDir"
                    + " [--parallelism N] [--checkpoint-ms N] [--guarantee exactly-once|at-least-once]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String impressionsTopic = args[1];
        String clicksTopic = args[2];
        String resultsTopic = args[3];
        String runId = args[4];
        Path workDir = Path.of(args[5]);
        int parallelism = 2;
        long checkpointMs = 1000;
        DeliveryGuarantee guarantee = DeliveryGuarantee.EXACTLY_ONCE;
        for (int i = 6; i < args.length; i += 2) {
            switch (args[i]) {
                case "--parallelism" -> parallelism = Integer.parseInt(args[i + 1]);
                case "--checkpoint-ms" -> checkpointMs = Long.parseLong(args[i + 1]);
                case "--guarantee" -> guarantee = switch (args[i + 1]) {
                    case "exactly-once" -> DeliveryGuarantee.EXACTLY_ONCE;
                    case "at-least-once" -> DeliveryGuarantee.AT_LEAST_ONCE;
                    default -> throw new IllegalArgumentException("unknown guarantee " + args[i + 1]);
                };
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(workDir);
        Map<String, String> settings = new HashMap<>();
        settings.put("state.backend.type", "rocksdb");
        settings.put("execution.checkpointing.dir", workDir.resolve("checkpoints").toUri().toString());
        settings.put("execution.checkpointing.incremental", "true");
        settings.put("execution.checkpointing.interval", checkpointMs + " ms");
        settings.put("execution.checkpointing.mode", "EXACTLY_ONCE");
        settings.put("io.tmp.dirs", workDir.resolve("tmp").toString());
        settings.put("parallelism.default", Integer.toString(parallelism));
        settings.put("taskmanager.numberOfTaskSlots", Integer.toString(parallelism));
        settings.put("pipeline.generic-types", "false"); // Event, JoinState, Result are POJOs: no Kryo
        settings.put("restart-strategy.type", "none"); // a failure fails the run instead of hiding in restarts
        Configuration conf = Configuration.fromMap(settings);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        JobGraph job = jobGraph(env, bootstrap, impressionsTopic, clicksTopic, resultsTopic, runId, guarantee);
        String warm = System.getProperty(WARM_UP_PROPERTY);
        JobGraph warmJob = null;
        if (warm != null && !warm.isBlank()) {
            String[] t = warm.split(",");
            warmJob = jobGraph(env, bootstrap, t[0], t[1], t[2], runId + "-warm", guarantee);
        }

        MiniClusterConfiguration cluster = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(parallelism)
                .withRandomPorts()
                .build();
        int exit;
        try (MiniCluster mini = new MiniCluster(cluster)) {
            mini.start();
            if (warmJob != null) {
                JobResult warmResult = mini.requestJobResult(mini.submitJob(warmJob).get().getJobID()).get();
                System.out.println("WARM " + warmResult.getApplicationStatus() + " " + System.currentTimeMillis());
                if (!warmResult.isSuccess()) {
                    System.exit(1);
                }
            }
            System.out.println("T0 " + System.currentTimeMillis());
            System.out.flush();
            JobID id = mini.submitJob(job).get().getJobID();
            JobResult result = mini.requestJobResult(id).get();
            System.out.println("FINISHED " + result.getApplicationStatus() + " " + System.currentTimeMillis());
            if (result.getSerializedThrowable().isPresent()) {
                result.getSerializedThrowable().get().printStackTrace(System.out);
            }
            System.out.flush();
            exit = result.isSuccess() ? 0 : 1;
        }
        System.exit(exit);
    }

    /** The join's job graph over the given topics, built on {@code env} (which forgets it after). */
    private static JobGraph jobGraph(StreamExecutionEnvironment env, String bootstrap, String impressionsTopic,
            String clicksTopic, String resultsTopic, String runId, DeliveryGuarantee guarantee) {
        WatermarkStrategy<Event> byTs = WatermarkStrategy.<Event>forBoundedOutOfOrderness(Duration.ofMinutes(1))
                .withTimestampAssigner((e, recordTs) -> e.ts)
                .withIdleness(Duration.ofMinutes(1));
        DataStream<Event> impressions = env.fromSource(source(bootstrap, impressionsTopic, runId, false), byTs,
                "read_impressions");
        DataStream<Event> clicks = env.fromSource(source(bootstrap, clicksTopic, runId, true), byTs, "read_clicks");
        KafkaSink<Result> sink = KafkaSink.<Result>builder()
                .setBootstrapServers(bootstrap)
                .setRecordSerializer(new ResultSerializer(resultsTopic))
                .setDeliveryGuarantee(guarantee)
                .setTransactionalIdPrefix("wcj-flink-" + runId)
                // the sink asks for 1 h; the broker allows 15 min at most (transaction.max.timeout.ms)
                .setProperty("transaction.timeout.ms", "900000")
                .build();
        impressions.union(clicks)
                .keyBy(e -> e.id)
                .process(new WaitClickFunction())
                .name("join")
                .sinkTo(sink)
                .name("results_topic");
        return env.getStreamGraph().getJobGraph();
    }

    private static KafkaSource<Event> source(String bootstrap, String topic, String runId, boolean click) {
        return KafkaSource.<Event>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topic)
                .setGroupId("wcj-flink-" + runId)
                .setClientIdPrefix("wcj-flink-" + runId + "-" + (click ? "clicks" : "impressions"))
                .setStartingOffsets(OffsetsInitializer.earliest())
                // finite, as the example's finite sources: stop at the end offsets seen at start
                .setBounded(OffsetsInitializer.latest())
                .setValueOnlyDeserializer(new EventDeserializer(click))
                .build();
    }
}
