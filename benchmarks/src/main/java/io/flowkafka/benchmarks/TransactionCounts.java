package io.flowkafka.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * What the transactions of one benchmark run cost beyond their commits: the broker's retriable produce errors, the
 * transactions and producer ids it handed out, and the tasks the job closed while it ran (each a revive or a
 * migration, which aborts the open transaction). Read from the JMX beans of the in-JVM broker and of the job's
 * clients, once before and once after a run, never per record.
 *
 * <p>The rule it keeps: each count is the difference of two snapshots of a monotonic counter, so other runs in the
 * same JVM do not leak into a run (jobs run one at a time). Broker counts cover every client of the broker during
 * the run (the job's producers, and the benchmark's own producers and meters, which are not transactional).
 *
 * <p>Threading: a snapshot is immutable; take them on any thread.
 *
 * @param outOfOrderSequence produce partitions answered {@code OUT_OF_ORDER_SEQUENCE_NUMBER} (transactions version 2
 *     rejects a first batch of a transaction whose sequence is not 0, KAFKA-18202; the producer retries)
 * @param concurrentTransactions produce partitions answered {@code CONCURRENT_TRANSACTIONS} (the previous transaction's
 *     markers not written yet after the broker's own retries, {@code add.partitions.to.txn.retry.backoff.max.ms})
 * @param otherProduceErrors produce partitions answered any other error
 * @param endTxn {@code EndTxn} requests (commits and aborts; under transactions version 2 each also bumps the
 *     producer epoch)
 * @param initProducerId {@code InitProducerId} requests, retried ones included (a producer started, or was
 *     re-initialised after a fence or an abortable error; while the broker's transaction coordinator is still loading,
 *     a start takes several)
 * @param tasksClosed tasks the job's stream threads closed (revived or migrated) while the job ran
 * @param abortMs the job's producers' time in {@code abortTransaction}, in ms
 * @param retriedRecords records the job's producers sent again
 */
record TransactionCounts(long outOfOrderSequence, long concurrentTransactions, long otherProduceErrors, long endTxn,
        long initProducerId, long tasksClosed, long abortMs, long retriedRecords) {
    private static final String OOS = "OUT_OF_ORDER_SEQUENCE_NUMBER";
    private static final String CONCURRENT = "CONCURRENT_TRANSACTIONS";

    /** A snapshot of the broker's counters and of the clients whose client id contains {@code job}. */
    static TransactionCounts snapshot(String job) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        long oos = 0;
        long concurrent = 0;
        long other = 0;
        for (ObjectName name : query(server, "kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Produce,*")) {
            String error = name.getKeyProperty("error");
            long count = number(server, name, "Count");
            if (OOS.equals(error)) {
                oos += count;
            } else if (CONCURRENT.equals(error)) {
                concurrent += count;
            } else if (!"NONE".equals(error)) {
                other += count;
            }
        }
        long endTxn = sum(server, "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=EndTxn,*", "Count");
        long init = sum(server, "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=InitProducerId,*",
                "Count");
        long closed = 0;
        for (ObjectName name : query(server, "kafka.streams:type=stream-thread-metrics,*")) {
            if (name.getKeyProperty("thread-id").contains(job)) {
                closed += number(server, name, "task-closed-total");
            }
        }
        long abortNs = 0;
        long retried = 0;
        for (ObjectName name : query(server, "kafka.producer:type=producer-metrics,*")) {
            if (name.getKeyProperty("client-id").contains(job)) {
                abortNs += number(server, name, "txn-abort-time-ns-total");
                retried += number(server, name, "record-retry-total");
            }
        }
        return new TransactionCounts(oos, concurrent, other, endTxn, init, closed, abortNs / 1_000_000, retried);
    }

    /**
     * This run's counts: broker counters from {@code before} to this snapshot; client counters as this snapshot
     * has them (the job's clients start with the run).
     */
    TransactionCounts since(TransactionCounts before) {
        return new TransactionCounts(outOfOrderSequence - before.outOfOrderSequence,
                concurrentTransactions - before.concurrentTransactions, otherProduceErrors - before.otherProduceErrors,
                endTxn - before.endTxn, initProducerId - before.initProducerId, tasksClosed, abortMs, retriedRecords);
    }

    /** The medians over {@code runs} of the retries, revives and producer inits, for the report's summary. */
    static String medians(List<TransactionCounts> runs) {
        return String.format(Locale.ROOT, "out-of-order sequence retries %.0f, concurrent-transactions retries %.0f, "
                        + "tasks closed while running %.0f, InitProducerId requests %.0f",
                CountingBenchmark.Report.median(runs.stream().mapToDouble(TransactionCounts::outOfOrderSequence).toArray()),
                CountingBenchmark.Report.median(runs.stream().mapToDouble(TransactionCounts::concurrentTransactions)
                        .toArray()),
                CountingBenchmark.Report.median(runs.stream().mapToDouble(TransactionCounts::tasksClosed).toArray()),
                CountingBenchmark.Report.median(runs.stream().mapToDouble(TransactionCounts::initProducerId).toArray()));
    }

    /** One line for the run's report. */
    String describe() {
        return String.format(Locale.ROOT, "transactions %,d (EndTxn), InitProducerId requests %d; produce retries: "
                        + "out-of-order sequence %,d, concurrent transactions %,d, other %,d; records re-sent %,d; "
                        + "tasks closed while running %d, abort time %d ms", endTxn, initProducerId,
                outOfOrderSequence, concurrentTransactions, otherProduceErrors, retriedRecords, tasksClosed, abortMs);
    }

    /** The beans matching {@code pattern}. */
    static Set<ObjectName> query(MBeanServer server, String pattern) {
        try {
            return server.queryNames(new ObjectName(pattern), null);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(pattern, e);
        }
    }

    /** The sum of {@code attribute} over the beans matching {@code pattern}. */
    static long sum(MBeanServer server, String pattern, String attribute) {
        long total = 0;
        for (ObjectName name : query(server, pattern)) {
            total += number(server, name, attribute);
        }
        return total;
    }

    /** The attribute as a whole number, 0 if the bean or the attribute went away meanwhile. */
    private static long number(MBeanServer server, ObjectName name, String attribute) {
        try {
            Object v = server.getAttribute(name, attribute);
            return v instanceof Number n ? (long) n.doubleValue() : 0;
        } catch (JMException | RuntimeException e) {
            return 0;
        }
    }
}
