package io.flowkafka.testing;

import static io.flowkafka.testing.StatusPagePipeline.getJson;
import static io.flowkafka.testing.StatusPagePipeline.instances;
import static io.flowkafka.testing.StatusPagePipeline.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The status shared by every instance (issue 27): two instances of one pipeline in this JVM, each with its own state
 * directory and operations server ({@code flow.http.port=0}), publish their parts to the compacted instances topic;
 * each one's {@code /status.json} lists both instances and every task of the pipeline, with the values they measure;
 * closing one takes it out of the other's view through its tombstone (not listed as gone).
 */
@WithKafka
@Timeout(180)
class StatusPageIT {
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Set<String> ALL_TASKS = Set.of("read/0", "read/1", "count/0", "count/1");

    @TempDir
    Path stateRoot;

    private final List<FlowRuntime> runtimes = new ArrayList<>();

    @AfterEach
    void closeRuntimes() {
        runtimes.forEach(FlowRuntime::close);
    }

    @Test
    void shouldListEveryInstanceAndTaskOnEachInstanceAndDropAClosedOne(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("status");
        String in = names.name("clicks");
        cluster.createTopic(in, 2);
        cluster.createTopic(names.name("counts"), 1);
        PipelineSpec spec = StatusPagePipeline.spec(pipeline, in, names.name("counts"));
        FlowRuntime a = StatusPagePipeline.start(cluster, spec, stateRoot, "a");
        runtimes.add(a);
        FlowRuntime b = StatusPagePipeline.start(cluster, spec, stateRoot, "b");
        runtimes.add(b);
        assertThat(a.httpAddress()).isPresent();
        assertThat(b.httpAddress().orElseThrow().getPort()).isNotEqualTo(a.httpAddress().orElseThrow().getPort());
        StatusPagePipeline.sendClicks(cluster, in, 50);

        for (FlowRuntime r : List.of(a, b)) {
            Await.until(BOUND, "the /status.json of " + r.httpAddress().orElseThrow() + " lists both instances, "
                    + "RUNNING, and all four tasks", () -> {
                        JsonNode view = getJson(r, "/status.json");
                        // an instance publishes its tasks as it gets them, and RUNNING at its next publish
                        return view != null && view.path("instances").size() == 2 && tasks(view).equals(ALL_TASKS)
                                && allRunning(view);
                    });
        }
        JsonNode view = getJson(a, "/status.json");
        assertThat(view.path("pipeline").asText()).isEqualTo(pipeline);
        assertThat(view.path("gone")).isEmpty();
        for (JsonNode instance : view.path("instances")) {
            assertThat(instance.path("http").asText()).startsWith("http://127.0.0.1:");
            assertThat(instance.path("state").asText()).isEqualTo("RUNNING");
            assertThat(instance.path("dead_letters").isNumber()).as("dead letters measured").isTrue();
            for (JsonNode task : instance.path("tasks")) {
                assertThat(task.has("input_lag")).isTrue();
                if (task.path("computation").asText().equals("count")) {
                    assertThat(task.path("visitors").get(0).path("stream").asText()).isEqualTo("audit");
                }
            }
        }
        JsonNode graph = getJson(b, "/graph.json");
        assertThat(graph.path("computations").findValuesAsText("id")).contains("read", "count");

        String topic = pipeline + ".instances";
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        assertThat(cluster.admin().describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                .get("cleanup.policy").value()).isEqualTo("compact");

        Set<String> before = instances(getJson(b, "/status.json"));
        a.close();
        assertThat(a.httpAddress()).as("the server stops with the runtime").isEmpty();
        Await.until(BOUND, "b's view drops the closed instance a", () -> {
            JsonNode v = getJson(b, "/status.json");
            return v != null && v.path("instances").size() == 1;
        });
        JsonNode after = getJson(b, "/status.json");
        assertThat(after.path("gone")).as("taken out by its tombstone, not listed as gone").isEmpty();
        assertThat(before).containsAll(instances(after));
        Await.until(BOUND, "b runs (and reports) all four tasks", () -> {
            JsonNode v = getJson(b, "/status.json");
            return v != null && tasks(v).equals(ALL_TASKS);
        });
    }

    private static boolean allRunning(JsonNode view) {
        for (JsonNode instance : view.path("instances")) {
            if (!instance.path("state").asText().equals("RUNNING")) {
                return false;
            }
        }
        return true;
    }
}
