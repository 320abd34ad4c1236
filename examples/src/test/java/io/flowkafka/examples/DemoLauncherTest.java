package io.flowkafka.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The demos' command line: help, bad input in one sentence, an unreachable cluster in one sentence. */
class DemoLauncherTest {
    private static final DemoLauncher.Cli CLI = new DemoLauncher.Cli("./demo.sh", "Does the demo.", "--impressions",
            "How many impressions to produce", 20_000);

    /** What a run printed and returned. */
    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        AtomicBoolean ran = new AtomicBoolean();
        int exit = DemoLauncher.run(args, CLI, (bootstrap, count) -> {
            ran.set(true);
            return 0;
        }, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(ran).as("the demo must not run").isFalse();
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldExplainEveryOptionOnHelp() throws Exception {
        for (String flag : new String[] {"--help", "-h"}) {
            Run r = run(flag);
            assertThat(r.exit()).isZero();
            assertThat(r.err()).isEmpty();
            assertThat(r.out()).startsWith("Usage: ./demo.sh [--bootstrap-servers HOST:PORT] [--impressions N]\n")
                    .doesNotContain("\u001b");
            String text = r.out().replaceAll("\\s+", " "); // lines are wrapped
            assertThat(text).contains("Does the demo.")
                    .containsPattern("--bootstrap-servers HOST:PORT The Kafka cluster to run on")
                    .contains("Without it, the demo starts a Kafka broker (KRaft) inside its own JVM")
                    .contains("--impressions N How many impressions to produce: a whole number of at least 1; "
                            + "20000 without the option.")
                    .contains("-h, --help Print this help and exit.")
                    .contains("Exit status: 0 when the demo succeeded, 1 when it did not");
            assertThat(r.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(100));
        }
    }

    @Test
    void shouldSayInOneSentenceThatANumberIsBad() throws Exception {
        Run r = run("--impressions", "abc");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines()).containsExactly(
                "--impressions takes a whole number, like 20000, not 'abc'.",
                "Run ./demo.sh --help for the options.");
        assertThat(run("--impressions", "0").err()).startsWith("--impressions takes a number from 1 to 2147483647, "
                + "not 0.\n");
        assertThat(run("--impressions", "99999999999").err()).startsWith("--impressions takes a number from 1 to "
                + "2147483647, not 99999999999.\n");
    }

    @Test
    void shouldSayInOneSentenceWhatIsWrongWithTheCommandLine() throws Exception {
        Run unknown = run("--records", "5");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).startsWith("Unknown option '--records': the options are --bootstrap-servers "
                + "HOST:PORT, --impressions N and --help.\n");
        Run missing = run("--impressions");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).startsWith("Option --impressions needs a value, like --impressions 20000.\n");
        assertThat(run("--bootstrap-servers", "--impressions", "5").err())
                .startsWith("Option --bootstrap-servers needs a value, like --bootstrap-servers localhost:9092.");
    }

    @Test
    void shouldParseTheOptions() throws Exception {
        DemoLauncher.Options o = DemoLauncher.parse(new String[] {"--bootstrap-servers", "h:9092", "--impressions", "7"},
                CLI);
        assertThat(o).isEqualTo(new DemoLauncher.Options("h:9092", 7, false));
        assertThat(DemoLauncher.parse(new String[0], CLI)).isEqualTo(new DemoLauncher.Options(null, 20_000, false));
        assertThatThrownBy(() -> DemoLauncher.parse(new String[] {"x"}, CLI))
                .isInstanceOf(DemoLauncher.UsageException.class);
    }

    @Test
    void shouldSayInOneSentenceThatTheClusterCannotBeReached() {
        String problem = assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> DemoLauncher.unreachable("localhost:1", Duration.ofSeconds(2)));
        assertThat(problem).isEqualTo("Cannot reach Kafka at localhost:1 within 2 s: check the address and that the "
                + "broker is running and reachable from here, or leave out --bootstrap-servers to run on a broker "
                + "inside the demo.");
    }
}
