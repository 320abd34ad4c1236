package io.flowkafka.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the CLI prints for a user's mistakes, without a cluster (helper audit): the reason Kafka hid behind
 * "Failed to create new KafkaAdminClient", {@code --verbose} typed after the subcommand, a missing
 * {@code --command-config} file, a change of {@code null}, and the state commands that need no {@code -b}.
 */
class FlowKafkaCliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return FlowKafkaCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    @Test
    void shouldNameTheReasonABootstrapAddressCannotBeUsed() {
        assertThat(run("status", "-b", "no-such-host.invalid:9092", "-p", "x")).isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("flow-kafka status: Kafka: Failed to create new KafkaAdminClient: ")
                .contains("bootstrap").doesNotContain("\tat ");
    }

    @Test
    void shouldPrintTheStackTraceWithVerboseAfterTheSubcommand() {
        assertThat(run("status", "-b", "no-such-host.invalid:9092", "-p", "x", "--verbose"))
                .isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("\tat ");
    }

    @Test
    void shouldPrintTheStackTraceWithVerboseBeforeTheSubcommand() {
        assertThat(run("--verbose", "status", "-b", "no-such-host.invalid:9092", "-p", "x"))
                .isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("\tat ");
    }

    @Test
    void shouldNameAMissingCommandConfigFile() {
        assertThat(run("status", "-b", "localhost:1", "-p", "x", "--command-config", "/no/such/client.properties"))
                .isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("--command-config /no/such/client.properties: no such readable file");
    }

    @Test
    void shouldRefuseANullChange() {
        assertThat(run("set-dynamic-spec", "-b", "localhost:1", "-p", "x", "-s", "spec.yaml", "--change", "null"))
                .isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("the change is not a JSON object").doesNotContain("Cannot invoke");
    }

    @Test
    void shouldNameAMissingChangeFile() {
        assertThat(run("set-dynamic-spec", "-b", "localhost:1", "-p", "x", "-s", "spec.yaml", "--change-file",
                "/no/such/change.json")).isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("--change-file /no/such/change.json: no such file")
                .doesNotContain("not a JSON object");
    }

    @Test
    void shouldSayWhatAChangeIsWhenItIsNoJsonObject() {
        assertThat(run("set-dynamic-spec", "-b", "localhost:1", "-p", "x", "-s", "spec.yaml", "--change", "[1]"))
                .isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("the change is not a JSON object: it is a JSON array")
                .doesNotContain("java.util");
    }

    @Test
    void shouldRefuseALimitWithAKey() {
        // --limit pages a key range; with one key it would be ignored
        assertThat(run("read-states", "-p", "x", "-c", "count", "-k", "{\"user\": \"a\"}", "--limit", "5",
                "-i", "localhost:1")).isEqualTo(FlowKafkaCli.USAGE);
        assertThat(err.toString()).contains("--limit pages a key range");
    }

    @Test
    void shouldReadStatesWithoutBootstrapServers() {
        // as docs/cli.md writes it: no -b; the instance at port 1 refuses the connection, which is a failure (1),
        // not a usage error (2) for a missing --bootstrap-servers
        int exit = run("read-states", "-p", "x", "-c", "count", "-k", "{\"user\": \"a\"}", "-i", "localhost:1");
        assertThat(err.toString()).doesNotContain("bootstrap-servers");
        assertThat(exit).isEqualTo(FlowKafkaCli.FAILED);
    }

    @Test
    void shouldSayTheClusterOptionsAStateCommandOnceRequiredAreNotUsed() {
        // review: scripts pass -b, which read-states required before; it is accepted and said to be unused
        int exit = run("read-states", "-b", "localhost:9092", "-p", "x", "-c", "count", "-k", "{\"user\": \"a\"}",
                "-i", "localhost:1");
        assertThat(exit).isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("flow-kafka read-states: -b not used: the instance at --instance answers "
                + "(drop it)");
    }

    @Test
    void shouldCountInstancesNotStreamThreads() {
        // operations audit: two instances of three stream threads each showed as "instances: 6"
        List<PipelineGroup.Member> members = new ArrayList<>();
        for (String process : List.of("0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7")) {
            for (int t = 1; t <= 3; t++) {
                members.add(new PipelineGroup.Member("app-" + process + "-StreamThread-" + t + "-consumer", "/10.0.0.1",
                        "2 partition(s)"));
            }
        }
        members.add(new PipelineGroup.Member("some-other-client", "/10.0.0.2", "0 partition(s)"));
        // review: with client.id set, the thread's client id has no process id; instances differ by host
        for (String host : List.of("/10.0.0.3", "/10.0.0.4")) {
            for (int t = 1; t <= 2; t++) {
                members.add(new PipelineGroup.Member("orders-StreamThread-" + t + "-consumer", host, "1 partition(s)"));
            }
        }
        assertThat(new PipelineGroup("app", false, "Stable", members).instances()).isEqualTo(5);
    }
}
