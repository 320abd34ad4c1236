package io.flowkafka.examples;

import io.flowkafka.api.FlowException;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;

/**
 * Shared command line of the demos: {@code [--bootstrap-servers host:port] [--<count flag> N] [--help]}.
 * Without {@code --bootstrap-servers} it starts an in-JVM broker for the run and stops it after;
 * the process exits with the demo's result: 0 when it succeeded, 1 when it did not (or the cluster
 * cannot be reached), 2 for a bad command line. Every problem it reports is one sentence, without a
 * stack trace, and its output is plain text (no terminal escape codes).
 */
public final class DemoLauncher {
    /** How long a cluster given with {@code --bootstrap-servers} has to answer. */
    static final Duration CONNECT_BOUND = Duration.ofSeconds(15);

    /** A demo run against a cluster. */
    @FunctionalInterface
    public interface Demo {
        /** Runs the demo; returns the process exit code (0 on success). */
        int run(String bootstrapServers, int count) throws Exception;
    }

    /**
     * What a demo's command line says about it.
     *
     * @param command how the user runs it, e.g. {@code ./demo.sh}
     * @param summary what the demo does, one or two sentences
     * @param countFlag the option setting how much data it produces, e.g. {@code --impressions}
     * @param countDescription what that number counts, e.g. "How many impressions to produce"
     * @param defaultCount the number without the option
     */
    public record Cli(String command, String summary, String countFlag, String countDescription, int defaultCount) {
    }

    /** The options of one run. */
    record Options(@Nullable String bootstrapServers, int count, boolean help) {
    }

    /** A bad command line: {@link #getMessage()} is one sentence for the user. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    private DemoLauncher() {
    }

    /** Parses {@code args}, runs {@code demo} and exits with its code (2 for a usage error). */
    public static void main(String[] args, Cli cli, Demo demo) throws Exception {
        System.exit(run(args, cli, demo, System.out, System.err));
    }

    /** Parses {@code args} and runs {@code demo}; returns the exit code. */
    static int run(String[] args, Cli cli, Demo demo, PrintStream out, PrintStream err) throws Exception {
        Options options;
        try {
            options = parse(args, cli);
        } catch (UsageException e) {
            err.println(e.getMessage());
            err.println("Run " + cli.command() + " --help for the options.");
            return 2;
        }
        if (options.help()) {
            out.print(help(cli));
            return 0;
        }
        String bootstrap = options.bootstrapServers();
        EmbeddedKafkaCluster cluster = null;
        if (bootstrap == null) {
            out.println("Starting an in-JVM Kafka broker (KRaft)...");
            cluster = EmbeddedKafkaCluster.start();
            bootstrap = cluster.bootstrapServers();
        } else {
            out.println("Connecting to Kafka at " + bootstrap + "...");
            String problem = unreachable(bootstrap, CONNECT_BOUND);
            if (problem != null) {
                err.println(problem);
                return 1;
            }
        }
        try {
            return demo.run(bootstrap, options.count());
        } catch (FlowException | KafkaException e) {
            err.println("FAILED: " + e.getMessage());
            return 1;
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    /**
     * The options in {@code args}.
     *
     * @throws UsageException for an unknown option, a missing value or a bad number
     */
    static Options parse(String[] args, Cli cli) throws UsageException {
        String bootstrap = null;
        int count = cli.defaultCount();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                return new Options(bootstrap, count, true);
            }
            if (!a.equals("--bootstrap-servers") && !a.equals(cli.countFlag())) {
                throw new UsageException("Unknown option '" + a + "': the options are --bootstrap-servers HOST:PORT, "
                        + cli.countFlag() + " N and --help.");
            }
            if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
                throw new UsageException("Option " + a + " needs a value, like " + a
                        + (a.equals("--bootstrap-servers") ? " localhost:9092." : " " + cli.defaultCount() + "."));
            }
            String value = args[++i];
            if (a.equals("--bootstrap-servers")) {
                bootstrap = value;
            } else {
                count = count(cli, value);
            }
        }
        return new Options(bootstrap, count, false);
    }

    private static int count(Cli cli, String value) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            if (value.trim().matches("-?\\d+")) {
                throw new UsageException(cli.countFlag() + " takes a number from 1 to " + Integer.MAX_VALUE + ", not "
                        + value.trim() + ".");
            }
            throw new UsageException(cli.countFlag() + " takes a whole number, like " + cli.defaultCount()
                    + ", not '" + value + "'.");
        }
        if (n < 1) {
            throw new UsageException(cli.countFlag() + " takes a number from 1 to " + Integer.MAX_VALUE + ", not "
                    + n + ".");
        }
        return n;
    }

    /** The text of {@code --help}: what the demo does, each option, the exit codes; lines of at most 100 characters. */
    static String help(Cli cli) {
        String count = cli.countFlag() + " N";
        int width = Math.max("--bootstrap-servers HOST:PORT".length(), count.length()) + 2;
        String indent = " ".repeat(width + 2);
        StringBuilder b = new StringBuilder();
        b.append("Usage: ").append(cli.command()).append(" [--bootstrap-servers HOST:PORT] [").append(count)
                .append("]\n\n");
        b.append(wrap(cli.summary(), 0, "")).append("\n\nOptions:\n");
        option(b, width, indent, "--bootstrap-servers HOST:PORT", "The Kafka cluster to run on (a comma-separated "
                + "list of brokers, as in bootstrap.servers); it must answer within " + CONNECT_BOUND.toSeconds()
                + " s. Without it, the demo starts a Kafka broker (KRaft) inside its own JVM and stops it at the end.");
        option(b, width, indent, count, cli.countDescription() + ": a whole number of at least 1; "
                + cli.defaultCount() + " without the option.");
        option(b, width, indent, "-h, --help", "Print this help and exit.");
        b.append('\n').append(wrap("Exit status: 0 when the demo succeeded, 1 when it did not or the cluster cannot "
                + "be reached, 2 for a bad command line.", 0, "")).append('\n');
        return b.toString();
    }

    private static void option(StringBuilder b, int width, String indent, String name, String text) {
        b.append("  ").append(name).append(" ".repeat(width - name.length()))
                .append(wrap(text, indent.length(), indent)).append('\n');
    }

    /** {@code text} wrapped at 100 columns from {@code column}; continuation lines start with {@code indent}. */
    private static String wrap(String text, int column, String indent) {
        StringBuilder b = new StringBuilder();
        boolean first = true;
        for (String word : text.split(" ")) {
            if (!first && column + 1 + word.length() > 100) {
                b.append('\n').append(indent);
                column = indent.length();
                first = true;
            }
            if (!first) {
                b.append(' ');
                column++;
            }
            b.append(word);
            column += word.length();
            first = false;
        }
        return b.toString();
    }

    /**
     * Null if the cluster at {@code bootstrap} answers within {@code bound}; else one sentence saying it does not
     * and what to check.
     */
    static @Nullable String unreachable(String bootstrap, Duration bound) {
        String sentence = "Cannot reach Kafka at " + bootstrap + " within " + bound.toSeconds() + " s: check the "
                + "address and that the broker is running and reachable from here, or leave out --bootstrap-servers "
                + "to run on a broker inside the demo.";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) bound.toMillis())).clusterId()
                    .get(bound.toMillis() + 1_000, TimeUnit.MILLISECONDS);
            return null;
        } catch (KafkaException | ExecutionException | java.util.concurrent.TimeoutException e) {
            return sentence;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return sentence;
        }
    }
}
