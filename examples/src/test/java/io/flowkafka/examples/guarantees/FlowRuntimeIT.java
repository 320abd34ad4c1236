package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.FlowException;
import io.flowkafka.examples.activity.ActivityPipeline;
import io.flowkafka.examples.external.StaticTableJoin;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ExternalTables;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/** FlowRuntime on a real broker: topic creation and check mode, lifecycle states, pause and resume. */
@WithKafka
class FlowRuntimeIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(120)
    void shouldCreateInternalTopicsWithPartitionsAndInfiniteRetention(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 2);
        PipelineSpec spec = ActivityPipeline.spec(names.name("p"), input, names.topic("out"), 3);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            String events = runtime.streamTopics("events").get(0);
            assertThat(events).isEqualTo(spec.name() + ".events");
            TopicDescription d = cluster.admin().describeTopics(List.of(events)).allTopicNames().get().get(events);
            assertThat(d.partitions()).hasSize(3);
            var cfg = cluster.admin().describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, events)))
                    .all().get().values().iterator().next();
            assertThat(cfg.get("retention.ms").value()).isEqualTo("-1");
            assertThat(cluster.admin().listTopics().names().get()).contains(runtime.deadLetterTopic());
            assertThat(runtime.applicationId()).isEqualTo(spec.name());
            assertThat(runtime.streamsProperties()).as("few partitions: flow-kafka's default batch size stays")
                    .containsEntry("producer.batch.size", "262144");
        }
    }

    @Test
    @Timeout(180)
    void shouldShrinkItsDefaultBatchSizeUntilTheThreadsPartitionsFitInBufferMemory(KafkaCluster cluster,
            TestNames names) throws Exception {
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 2);
        PipelineSpec spec = ActivityPipeline.spec(names.name("p"), input, output, 2);
        Properties props = props(cluster);
        // 1 MiB holds two 256 KiB batches of only two partitions; this pipeline's thread writes to more
        props.put("producer.buffer.memory", "1048576");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props);
                KafkaConsumer<String, String> consumer = consumer(cluster, output)) {
            assertThat(runtime.streamsProperties()).containsEntry("producer.batch.size", "262144");
            runtime.start();
            int size = Integer.parseInt(runtime.streamsProperties().getProperty("producer.batch.size"));
            assertThat(size).as("a power of two below 256 KiB, not below Kafka's 16 KiB")
                    .isBetween(16384, 131072).matches(s -> Integer.bitCount(s) == 1);
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            produce(cluster, input, 10);
            List<String> seen = new java.util.ArrayList<>();
            Await.until(Duration.ofMinutes(1), "10 outputs", () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
                return seen.size() >= 10;
            });
        }
        props.put("producer.batch.size", "262144");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            assertThat(runtime.streamsProperties()).as("the user's batch size is the user's")
                    .containsEntry("producer.batch.size", "262144");
        }
    }

    @Test
    @Timeout(120)
    void shouldRefuseToStartInCheckModeNamingEveryMissingTopic(KafkaCluster cluster, TestNames names) {
        String input = names.topic("in");
        PipelineSpec spec = ActivityPipeline.spec(names.name("p"), input, names.topic("out"), 2);
        Properties props = props(cluster);
        props.put("flow.topics.mode", "check");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            assertThatThrownBy(runtime::start).isInstanceOf(FlowException.class)
                    .hasMessageContaining("source topic(s) [" + input + "] do not exist")
                    .hasMessageContaining(spec.name() + ".events does not exist: create it with 2 partition(s)")
                    .hasMessageContaining(spec.name() + ".dlq does not exist")
                    .hasMessageContaining("flow.topics.mode=create");
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.FAILED);
        }
    }

    /**
     * A table topic someone created with the broker's default retention (a delete policy, 7 days) would lose rows
     * for instances that rebuild the table from it (helper audit): refused at start, naming the topic and the fix.
     */
    @Test
    @Timeout(120)
    void shouldRefuseToStartWhileATableTopicDeletesOldRows(KafkaCluster cluster, TestNames names) throws Exception {
        String products = names.topic("products");
        String orders = names.topic("orders");
        cluster.createTopic(products, 2);
        cluster.createTopic(orders, 2);
        String pipeline = names.name("tables");
        String table = ExternalTables.defaultTopic(pipeline,
                StaticTableJoin.TABLE);
        cluster.createTopic(table, 2); // the broker's defaults: cleanup.policy=delete
        PipelineSpec spec = StaticTableJoin.spec(pipeline, products, orders,
                names.topic("loaded"), names.topic("enriched"), 2);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            assertThatThrownBy(runtime::start).isInstanceOf(FlowException.class)
                    .hasMessageContaining("topic " + table + " holds a table that instances rebuild from its beginning, "
                            + "but its cleanup.policy is delete with retention.ms ")
                    .hasMessageContaining("--add-config cleanup.policy=compact");
        }
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, table);
        cluster.admin().incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
                new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET)))).all()
                .get(30, TimeUnit.SECONDS);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            runtime.start(); // compacted now: starts
            assertThat(runtime.state()).isNotEqualTo(FlowRuntime.State.FAILED);
        }
    }

    @Test
    void shouldRefuseToStartAKeyedJoinOfTopicsWithDifferentPartitionCounts(KafkaCluster cluster, TestNames names) {
        String impressions = names.topic("impressions");
        String clicks = names.topic("clicks");
        cluster.createTopic(impressions, 4);
        cluster.createTopic(clicks, 2);
        var spec = io.flowkafka.examples.waitclick.WaitClickJoin.keyedSpec(names.name("wcjk"), impressions, clicks,
                names.topic("results"), false);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            assertThatThrownBy(runtime::start).isInstanceOf(FlowException.class)
                    .hasMessageContaining("computation 'join' reads key-partitioned sources whose topics have different "
                            + "partition counts {" + impressions + "=4, " + clicks + "=2}")
                    .hasMessageContaining("repartition the topics to one count");
        }
    }

    @Test
    @Timeout(180)
    void shouldHoldOutputWhilePausedAndCatchUpOnResume(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 2);
        PipelineSpec spec = ActivityPipeline.spec(names.name("p"), input, output, 2);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                KafkaConsumer<String, String> consumer = consumer(cluster, output)) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            produce(cluster, input, 10);
            List<String> seen = new java.util.ArrayList<>();
            Await.until(Duration.ofMinutes(1), "10 outputs", () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
                return seen.size() >= 10;
            });
            runtime.pause();
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.PAUSED);
            produce(cluster, input, 10);
            // while paused nothing new is committed (a bounded poll, not a sleep)
            assertThat(consumer.poll(Duration.ofSeconds(2)).count()).isZero();
            runtime.resume();
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
            Await.until(Duration.ofMinutes(1), "20 outputs", () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
                return seen.size() >= 20;
            });
            assertThat(seen).hasSize(20);
            assertThat(runtime.stop(Duration.ofSeconds(30))).isTrue();
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.STOPPED);
        }
    }

    @Test
    @Timeout(180)
    void shouldHandAStoppedInstancesPartitionsToTheOthersWithoutWaitingForItsSessionToTimeOut(KafkaCluster cluster,
            TestNames names) throws Exception {
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 2);
        PipelineSpec spec = ActivityPipeline.spec(names.name("p"), input, output, 2);
        // a session far longer than the wait below: only leaving the group on stop moves the partitions in time
        Duration session = Duration.ofMinutes(2);
        Properties props = props(cluster);
        props.put("session.timeout.ms", String.valueOf(session.toMillis()));
        Properties other = props(cluster);
        other.put("session.timeout.ms", String.valueOf(session.toMillis()));
        try (FlowRuntime a = FlowRuntime.create(spec, props); FlowRuntime b = FlowRuntime.create(spec, other);
                KafkaConsumer<String, String> consumer = consumer(cluster, output)) {
            a.start();
            assertThat(a.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            b.start();
            // b runs once the rebalance it joined has given it its share of the 4 tasks (their changelogs are
            // empty, so it is caught up on each and the assignor balances them at once)
            assertThat(b.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            assertThat(a.stop(Duration.ofSeconds(30))).isTrue();
            produce(cluster, input, 10);
            List<String> seen = new java.util.ArrayList<>();
            Await.until(session.dividedBy(2), "all 10 outputs from the remaining instance, within half a session",
                    () -> {
                        consumer.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
                        return seen.size() >= 10;
                    });
            assertThat(seen).hasSize(10);
        }
    }

    private static Properties props(KafkaCluster cluster) {
        Properties p = cluster.clientProperties();
        try {
            p.put("state.dir", Files.createTempDirectory(tempRoot, "flow-runtime-it").toString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        p.put("commit.interval.ms", "100");
        return p;
    }

    private static void produce(KafkaCluster cluster, String topic, int n) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, "u" + i, "{\"user\":\"u" + i + "\",\"action\":\"a\",\"ts\":" + i + "}"));
            }
        }
    }

    /** A read_committed consumer of {@code topic} from its start, subscribed (also used by other ITs here). */
    static KafkaConsumer<String, String> consumer(KafkaCluster cluster, String topic) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        c.subscribe(List.of(topic));
        return c;
    }
}
