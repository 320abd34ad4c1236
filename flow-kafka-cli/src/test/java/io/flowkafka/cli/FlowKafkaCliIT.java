package io.flowkafka.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI as a user runs it: the script {@code bin/flow-kafka} on the built jar, with arguments, against a real
 * broker; each test checks the exit code and what the command printed.
 */
@WithKafka
class FlowKafkaCliIT {
    @TempDir
    Path dir;

    /** One run of the CLI: exit code, standard output, standard error. */
    record Run(int exit, String out, String err) {
    }

    static Run cli(String... args) {
        try {
            return run(args);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Run run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(System.getProperty("flow.cli.script", "bin/flow-kafka")));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("FLOW_KAFKA_CLI_JAR", System.getProperty("flow.cli.jar"));
        Path out = Files.createTempFile("cli-out", ".txt");
        Path err = Files.createTempFile("cli-err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the CLI finished within 60 s: " + command).isTrue();
        Run run = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        Files.delete(out);
        Files.delete(err);
        return run;
    }

    @Test
    @Timeout(120)
    void shouldPrintHelpWithTheCommandsAndExitCodes() throws Exception {
        Run help = cli("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("describe", "status", "get-dynamic-spec", "set-dynamic-spec", "pause",
                "resume", "drain", "stop", "start", "reset", "read-states", "delete-states", "Exit codes:",
                "4   refused");
        Run bad = cli("status", "--pipeline", "x");
        assertThat(bad.exit()).as("a missing required option is a usage error").isEqualTo(2);
        assertThat(bad.err()).contains("Missing required option: '--bootstrap-servers=HOST:PORT[,...]'");
    }

    @Test
    @Timeout(120)
    void shouldDescribeASpecFileAsTextAndMermaidAndRejectAnInvalidOneNamingTheField() throws Exception {
        Path spec = Files.writeString(dir.resolve("orders.yaml"), """
                name: orders
                streams:
                  raw: {schema: {type: record, name: Order, fields: [{name: id, type: string}]}}
                  orders: {schema: {type: record, name: Order, fields: [{name: id, type: string}]}}
                computations:
                  read:
                    computation_class_name: Source
                    source_streams:
                      raw: {source_class_name: KafkaSource, parameters: {topics: orders-in}}
                    output_stream_ids: [orders]
                    sinks:
                      out: {sink_class_name: KafkaSink, input_stream_ids: [orders], parameters: {topic: orders-out}}
                """);
        Run text = cli("describe", "--spec", spec.toString());
        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out()).isEqualTo("""
                pipeline orders: 1 computation(s), 2 stream(s)
                  computation read (source, exactly_once)
                    source  raw <- KafkaSource [orders-in]
                    output  orders
                    sink    out (KafkaSink) <- orders -> topic orders-out
                """);
        Run mermaid = cli("describe", "-s", spec.toString(), "--format", "mermaid");
        assertThat(mermaid.exit()).isZero();
        assertThat(mermaid.out()).startsWith("flowchart LR\n").contains("s_read_raw -->|raw| c_read",
                "c_read -->|orders| k_read_out");
        Path bad = Files.writeString(dir.resolve("bad.yaml"), Files.readString(spec)
                .replace("input_stream_ids: [orders]", "input_stream_ids: [ordres]"));
        Run invalid = cli("describe", "-s", bad.toString());
        assertThat(invalid.exit()).isEqualTo(1);
        assertThat(invalid.err()).contains("is not a valid spec", "read", "ordres").doesNotContain("\tat ");
    }

    /**
     * With {@code group.protocol=streams} (KIP-1071) the instances form a streams group, which the consumer-group
     * listing does not show: {@code status} must still count them and {@code reset} must still refuse.
     */
    @Test
    @Timeout(240)
    void shouldSeeTheInstancesOfAStreamsGroupAndRefuseToResetThem(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("clis");
        String input = names.topic("in");
        String output = names.topic("out");
        Path specFile = sourceToSink(cluster, pipeline, input, output, "pipeline.yaml");
        Properties props = runtimeProps(cluster, "state");
        props.put("group.protocol", "streams");
        String bootstrap = cluster.bootstrapServers();
        try (FlowRuntime runtime = FlowRuntime.create(specFile, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(1), "the input committed", () -> committed(cluster, pipeline, input) == 50);
            Run status = cli("status", "-b", bootstrap, "-p", pipeline);
            assertThat(status.exit()).as(status.err()).isZero();
            assertThat(status.out()).contains("instances: 1 (streams group ", "task(s)", input + ": p0 ");
            // draining cannot pause source topics under the streams protocol: said in the status, not ignored
            Run drain = cli("drain", "-b", bootstrap, "-p", pipeline, "-s", specFile.toString());
            assertThat(drain.exit()).as(drain.err()).isZero();
            Await.until(Duration.ofSeconds(30), "the instance reports draining without effect", () -> runtime.status()
                    .stream().anyMatch(e -> e.path().equals("/dynamic_spec/draining")
                            && e.message().contains("group.protocol=streams")));
            Run cancel = cli("drain", "-b", bootstrap, "-p", pipeline, "-s", specFile.toString(), "--cancel");
            assertThat(cancel.exit()).as(cancel.err()).isZero();
            Await.until(Duration.ofSeconds(30), "the report cleared once draining is off", () -> runtime.status()
                    .stream().noneMatch(e -> e.path().equals("/dynamic_spec/draining")));
            Run refused = cli("reset", "-b", bootstrap, "-p", pipeline, "--execute");
            assertThat(refused.exit()).as(refused.out()).isEqualTo(4);
            assertThat(refused.err()).contains("refused", "stop every instance first");
        }
        Run reset = cli("reset", "-b", bootstrap, "-p", pipeline, "--execute");
        assertThat(reset.exit()).as(reset.err()).isZero();
        assertThat(reset.out()).contains("streams group " + pipeline, "reset done");
        assertThat(cli("status", "-b", bootstrap, "-p", pipeline).exit()).as("the group is gone").isEqualTo(3);
    }

    /**
     * A pipeline running with {@code flow.application.id.prefix}, reset without {@code --application-id-prefix}: no
     * group has the name the CLI looks for, but the running instances read the topics it would delete.
     */
    @Test
    @Timeout(240)
    void shouldRefuseToResetTheTopicsOfAPipelineRunningUnderAnotherApplicationId(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("clip");
        String input = names.topic("in");
        String output = names.topic("out");
        Path specFile = sourceToSink(cluster, pipeline, input, output, "prefixed.yaml");
        Properties props = runtimeProps(cluster, "state-prefixed");
        props.put("flow.application.id.prefix", "app-");
        String bootstrap = cluster.bootstrapServers();
        try (FlowRuntime runtime = FlowRuntime.create(specFile, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(1), "the input committed",
                    () -> committed(cluster, "app-" + pipeline, input) == 50);
            Run refused = cli("reset", "-b", bootstrap, "-p", pipeline, "--execute");
            assertThat(refused.exit()).as(refused.out()).isEqualTo(4);
            assertThat(refused.err()).contains("refused", "app-" + pipeline, "another flow.application.id.prefix");
            assertThat(cluster.admin().listTopics().names().get()).as("nothing deleted")
                    .anyMatch(t -> t.startsWith(pipeline + "."));
        }
    }

    @Test
    @Timeout(240)
    void shouldShowStatusAndRefuseToResetARunningPipelineThenResetItOnceStopped(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("clip");
        String input = names.topic("in");
        String output = names.topic("out");
        Path specFile = sourceToSink(cluster, pipeline, input, output, "pipeline.yaml");
        Properties props = runtimeProps(cluster, "state");
        String bootstrap = cluster.bootstrapServers();
        try (FlowRuntime runtime = FlowRuntime.create(specFile, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(1), "the input committed", () -> committed(cluster, pipeline, input) == 50);
            Run getSpec = cli("get-spec", "-b", bootstrap, "-p", pipeline);
            assertThat(getSpec.exit()).as(getSpec.err()).isZero();
            assertThat(getSpec.out()).as("the file the instance was created from").isEqualTo(Files.readString(specFile));
            assertThat(cli("get-spec", "-b", bootstrap, "-p", pipeline, "--graph").out())
                    .isEqualTo(runtime.describe().text());
            Run status = cli("status", "-b", bootstrap, "-p", pipeline);
            assertThat(status.exit()).as(status.err()).isZero();
            assertThat(status.out()).contains("total lag: 0 record(s) over 2 partition(s)","pipeline " + pipeline + " (application.id " + pipeline + ")",
                    "instances: 1 (group Stable; 1 member(s), one per stream thread)", input + ": p0 ", "dead letters:");
            Run none = cli("get-dynamic-spec", "-b", bootstrap, "-p", pipeline);
            assertThat(none.exit()).as(none.err()).isZero();
            assertThat(none.out()).contains("\"version\" : 0", "\"dynamic_spec\" : { }");
            String change = "{\"computations\": {\"read\": {\"skip_if_expression\": \"n < 10\"}}}";
            Run dryRun = cli("set-dynamic-spec", "-b", bootstrap, "-p", pipeline, "-s", specFile.toString(),
                    "--change", change, "--dry-run");
            assertThat(dryRun.exit()).as(dryRun.err()).isZero();
            assertThat(dryRun.out()).contains("computations.read.skip_if_expression: (static) -> \"n < 10\"",
                    "dry run: not published");
            Run bad = cli("set-dynamic-spec", "-b", bootstrap, "-p", pipeline, "-s", specFile.toString(),
                    "--change", "{\"computations\": {\"read\": {\"skip_if_expression\": \"n <\"}}}");
            assertThat(bad.exit()).isEqualTo(1);
            assertThat(bad.err()).contains("rejected, nothing published",
                    "dynamic_spec.computations.read.skip_if_expression at");
            assertThat(cli("get-dynamic-spec", "-b", bootstrap, "-p", pipeline).out())
                    .as("neither the dry run nor the bad change published").contains("\"version\" : 0");
            Run set = cli("set-dynamic-spec", "-b", bootstrap, "-p", pipeline, "-s", specFile.toString(),
                    "--change", change);
            assertThat(set.exit()).as(set.err()).isZero();
            assertThat(set.out()).contains("published version 1");
            Await.until(Duration.ofSeconds(30), "the running instance applied the CLI's change",
                    () -> runtime.dynamicSpec().toString().contains("n < 10"));
            assertThat(cli("get-dynamic-spec", "-b", bootstrap, "-p", pipeline).out()).contains("\"version\" : 1",
                    "\"skip_if_expression\" : \"n < 10\"");
            Run refused = cli("reset", "-b", bootstrap, "-p", pipeline, "--execute");
            assertThat(refused.exit()).isEqualTo(4);
            assertThat(refused.err()).contains("refused", "running consumer(s)", "stop every instance first");
        }
        // two other pipelines whose names begin with this one's: their topics match its prefixes (helper audit)
        for (String other : List.of(pipeline + ".v2.status", pipeline + ".v2.events", pipeline + "-eu.status",
                pipeline + "-eu-count.state-changelog")) {
            cluster.createTopic(other, 1);
        }
        Run dry = cli("reset", "-b", bootstrap, "-p", pipeline);
        assertThat(dry.exit()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("would delete (dry run; add --execute)", "consumer group " + pipeline,
                "topic " + pipeline + ".status", "keeping topic " + pipeline + ".dynamic-spec",
                "keeping topic " + pipeline + ".v2.events (pipeline " + pipeline + ".v2's)",
                "keeping topic " + pipeline + "-eu-count.state-changelog (pipeline " + pipeline + "-eu's)");
        assertThat(cli("status", "-b", bootstrap, "-p", pipeline).exit()).as("a dry run deletes nothing").isZero();
        Run reset = cli("reset", "-b", bootstrap, "-p", pipeline, "--execute");
        assertThat(reset.exit()).as(reset.err()).isZero();
        assertThat(reset.out()).contains("reset done");
        assertThat(cluster.admin().listTopics().names().get()).doesNotContain(pipeline + ".status")
                .contains(input, output, pipeline + ".v2.status", pipeline + ".v2.events",
                        pipeline + "-eu-count.state-changelog");
        Run gone = cli("status", "-b", bootstrap, "-p", pipeline);
        assertThat(gone.exit()).as(gone.err()).isEqualTo(3);
        assertThat(gone.err()).contains("no pipeline '" + pipeline + "'");
    }

    @Test
    @Timeout(240)
    void shouldPauseResumeAndDrainEveryInstanceThroughTheDynamicSpec(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("clictl");
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 2);
        cluster.createTopic(output, 2);
        Path specFile = sourceToSinkSpec(dir.resolve("control.yaml"), pipeline, input, output);
        Properties props = cluster.clientProperties();
        props.put("state.dir", dir.resolve("control-state").toString());
        props.put("commit.interval.ms", "100");
        String b = cluster.bootstrapServers();
        String s = specFile.toString();
        try (FlowRuntime runtime = FlowRuntime.create(PipelineSpecLoader.fromFile(specFile), props);
                OutputCounter out = new OutputCounter(cluster, output)) {
            runtime.start();
            produce(cluster, input, 10);
            Await.until(Duration.ofMinutes(1), "10 outputs", () -> out.count() >= 10);

            Run pause = cli("pause", "-b", b, "-p", pipeline, "-s", s);
            assertThat(pause.exit()).as(pause.err()).isZero();
            assertThat(pause.out()).contains("paused: (static) -> true", "published version 1");
            Await.until(Duration.ofSeconds(30), "the instance paused", () -> runtime.state()
                    == FlowRuntime.State.PAUSED);
            runtime.resume(); // the application's resume does not end the pause flow-kafka pause asked for
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.PAUSED);
            produce(cluster, input, 10);
            Run resume = cli("resume", "-b", b, "-p", pipeline, "-s", s);
            assertThat(resume.exit()).as(resume.err()).isZero();
            assertThat(resume.out()).contains("paused: true -> false");
            Await.until(Duration.ofSeconds(30), "the instance resumed", () -> runtime.state()
                    == FlowRuntime.State.RUNNING);
            Await.until(Duration.ofMinutes(1), "20 outputs after the resume", () -> out.count() >= 20);

            Run drain = cli("drain", "-b", b, "-p", pipeline, "-s", s);
            assertThat(drain.exit()).as(drain.err()).isZero();
            assertThat(drain.out()).contains("computations.read.draining: (static) -> true");
            Await.until(Duration.ofSeconds(30), "the instance drains 'read'",
                    () -> runtime.dynamicSpec().toString().contains("draining=true"));
            Run wrong = cli("drain", "-b", b, "-p", pipeline, "-s", s, "-c", "nope");
            assertThat(wrong.exit()).isEqualTo(1);
            assertThat(wrong.err()).contains("dynamic_spec.computations.nope: unknown computation 'nope'");
            produce(cluster, input, 10);
            Run cancel = cli("drain", "-b", b, "-p", pipeline, "-s", s, "--cancel");
            assertThat(cancel.exit()).as(cancel.err()).isZero();
            assertThat(cancel.out()).contains("computations.read.draining: true -> (static)");
            Await.until(Duration.ofMinutes(1), "30 outputs once the sources are read again", () -> out.count() >= 30);
            assertThat(out.count()).as("each input once").isEqualTo(30);

            Run stop = cli("stop", "-b", b, "-p", pipeline, "-s", s);
            assertThat(stop.exit()).as(stop.err()).isZero();
            assertThat(stop.out()).contains("stopped: (static) -> true", "stopped: no instance of " + pipeline + " runs");
            // the group is empty once the instance left it; its runtime then closes its sinks and says STOPPED
            Await.until(Duration.ofSeconds(30), "the instance drained and stopped itself",
                    () -> runtime.state() == FlowRuntime.State.STOPPED);
            assertThat(out.count()).as("nothing lost or repeated by the stop").isEqualTo(30);
            Run start = cli("start", "-b", b, "-p", pipeline, "-s", s);
            assertThat(start.exit()).as(start.err()).isZero();
            assertThat(start.out()).contains("stopped: true -> (static)");
            // a wrong --application-id-prefix: no group to follow, which must not read as "stopped"
            Run elsewhere = cli("stop", "-b", b, "-p", pipeline, "-s", s, "--application-id-prefix", "other-");
            assertThat(elsewhere.exit()).as(elsewhere.out() + elsewhere.err()).isEqualTo(3);
            assertThat(elsewhere.err()).contains("no consumer group 'other-" + pipeline + "'", "--application-id-prefix");
            assertThat(elsewhere.out()).doesNotContain("no instance of");
        }
    }

    /** Writes the spec of a pipeline reading JSON events from {@code input} and writing them to {@code output}. */
    private static Path sourceToSinkSpec(Path file, String pipeline, String input, String output) throws IOException {
        return Files.writeString(file, """
                name: %s
                streams:
                  raw: {schema: {type: record, name: Event, fields: [{name: id, type: string}, {name: n, type: long}]}}
                  events: {schema: {type: record, name: Event, fields: [{name: id, type: string}, {name: n, type: long}]}}
                computations:
                  read:
                    computation_class_name: Source
                    source_streams:
                      raw: {source_class_name: KafkaSource, parameters: {topics: %s}}
                    output_stream_ids: [events]
                    sinks:
                      out: {sink_class_name: KafkaSink, input_stream_ids: [events], parameters: {topic: %s}}
                """.formatted(pipeline, input, output));
    }

    /** Counts the records of a topic (read_committed), polling on each call. */
    static final class OutputCounter implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private long count;

        OutputCounter(KafkaCluster cluster, String topic) {
            Properties p = cluster.clientProperties();
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.GROUP_ID_CONFIG, "counter-" + topic);
            consumer = new KafkaConsumer<>(p);
            consumer.subscribe(List.of(topic));
        }

        long count() {
            count += consumer.poll(Duration.ofMillis(200)).count();
            return count;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }

    /** A source-to-sink pipeline's spec file, over new topics {@code input} (50 records) and {@code output}. */
    private Path sourceToSink(KafkaCluster cluster, String pipeline, String input, String output, String file)
            throws Exception {
        cluster.createTopic(input, 2);
        cluster.createTopic(output, 2);
        produce(cluster, input, 50);
        return sourceToSinkSpec(dir.resolve(file), pipeline, input, output);
    }

    /** The runtime's properties: the cluster's, a state directory {@code state} and a 100 ms commit interval. */
    private Properties runtimeProps(KafkaCluster cluster, String state) {
        Properties props = cluster.clientProperties();
        props.put("state.dir", dir.resolve(state).toString());
        props.put("commit.interval.ms", "100");
        return props;
    }

    private static long committed(KafkaCluster cluster, String group, String topic) {
        try {
            return cluster.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet()
                    .stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            return -1; // the group is not there yet
        }
    }

    private static void produce(KafkaCluster cluster, String topic, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "{\"id\":\"e" + i + "\",\"n\":" + i + "}"));
            }
            producer.flush();
        }
    }
}
