package io.flowkafka.examples;

import io.flowkafka.testing.EmbeddedKafkaCluster;

/**
 * Shared command line of the demos: {@code [--bootstrap-servers host:port] [--<count flag> N]}.
 * Without {@code --bootstrap-servers} it starts an in-JVM broker for the run and stops it after;
 * the process exits with the demo's result.
 */
public final class DemoLauncher {
    /** A demo run against a cluster. */
    @FunctionalInterface
    public interface Demo {
        /** Runs the demo; returns the process exit code (0 on success). */
        int run(String bootstrapServers, int count) throws Exception;
    }

    private DemoLauncher() {
    }

    /** Parses {@code args}, runs {@code demo} and exits with its code (2 for a usage error). */
    public static void main(String[] args, String countFlag, int defaultCount, Demo demo) throws Exception {
        String usage = "usage: demo [--bootstrap-servers host:port] [" + countFlag + " N]";
        String bootstrap = null;
        int count = defaultCount;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--bootstrap-servers") && i + 1 < args.length) {
                bootstrap = args[++i];
            } else if (args[i].equals(countFlag) && i + 1 < args.length) {
                count = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--help") || args[i].equals("-h")) {
                System.out.println(usage);
                return;
            } else {
                System.err.println("unknown argument " + args[i] + "; " + usage);
                System.exit(2);
            }
        }
        EmbeddedKafkaCluster cluster = null;
        if (bootstrap == null) {
            System.out.println("Starting an in-JVM Kafka broker (KRaft)...");
            cluster = EmbeddedKafkaCluster.start();
            bootstrap = cluster.bootstrapServers();
        }
        int exit;
        try {
            exit = demo.run(bootstrap, count);
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
        System.exit(exit);
    }
}
