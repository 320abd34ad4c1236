package io.flowkafka.cli;

import java.io.PrintWriter;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.KafkaException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * The {@code flow-kafka} command: operates a pipeline on a Kafka cluster from its bootstrap servers and name. Owns
 * the exit codes (documented in docs/cli.md) and the rule that a failure is one sentence on stderr, not a stack
 * trace ({@code --verbose} adds it).
 */
@Command(name = "flow-kafka", mixinStandardHelpOptions = true, versionProvider = FlowKafkaCli.Version.class,
        description = "Operate a flow-kafka pipeline on a Kafka cluster.",
        subcommands = {DescribeCommand.class, StatusCommand.class, GetSpecCommand.class,
                GetDynamicSpecCommand.class, SetDynamicSpecCommand.class, PauseCommand.class, PauseCommand.Resume.class, DrainCommand.class,
                StopCommand.class, StopCommand.Start.class, ResetCommand.class, ReadStatesCommand.class,
                DeleteStatesCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:failed (the message says why: cluster unreachable, bad file, ...)",
                "2:bad arguments", "3:not found (no such pipeline on the cluster, or no state for the key)",
                "4:refused (e.g. reset while instances run)"})
public final class FlowKafkaCli {
    /** Done. */
    public static final int OK = 0;
    /** Failed: the cluster did not answer, a file could not be read, a spec was invalid. */
    public static final int FAILED = 1;
    /** Bad arguments (picocli's usage error code). */
    public static final int USAGE = 2;
    /** The pipeline was not found on the cluster. */
    public static final int NOT_FOUND = 3;
    /** The command refused to act, e.g. {@code reset} while instances run. */
    public static final int REFUSED = 4;

    @CommandLine.Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
            description = "print the stack trace of a failure")
    boolean verbose;

    private FlowKafkaCli() {
    }

    /**
     * Runs the CLI.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the CLI with the given output and error writers; returns the exit code. */
    static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new FlowKafkaCli());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler(new Failure());
        return cli.execute(args);
    }

    /** A failure as one sentence on stderr and exit code 1; the stack trace only with {@code --verbose}. */
    private static final class Failure implements IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception e, CommandLine cmd, ParseResult parsed) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            String what = cause instanceof TimeoutException || cause instanceof org.apache.kafka.common.errors
                    .TimeoutException ? "the cluster did not answer in time (check --bootstrap-servers and "
                    + "--command-config): " + cause.getMessage()
                    : cause instanceof KafkaException ? "Kafka: " + withReason(cause) : cause.getMessage();
            cmd.getErr().println("flow-kafka " + cmd.getCommandName() + ": " + what);
            if (verbose(parsed)) {
                cause.printStackTrace(cmd.getErr());
            }
            return FAILED;
        }

        /** {@code --verbose} is inherited: typed after a subcommand, it is that subcommand's match. */
        private static boolean verbose(ParseResult parsed) {
            for (ParseResult p = parsed; p != null; p = p.subcommand()) {
                if (p.hasMatchedOption("--verbose")) {
                    return true;
                }
            }
            return false;
        }

        /** Kafka wraps the reason ("No resolvable bootstrap urls ...") in a generic message; both are shown. */
        private static String withReason(Throwable e) {
            String message = String.valueOf(e.getMessage());
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            return root == e || root.getMessage() == null || message.contains(root.getMessage()) ? message
                    : message + ": " + root.getMessage();
        }
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = FlowKafkaCli.class.getPackage().getImplementationVersion();
            return new String[] {"flow-kafka " + (v == null ? "(development build)" : v)};
        }
    }
}
