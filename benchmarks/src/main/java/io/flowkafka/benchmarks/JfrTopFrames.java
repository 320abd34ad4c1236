package io.flowkafka.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Aggregates the CPU samples of JFR recordings (one or more files, such as those {@code CountingBenchmark --jfr DIR}
 * writes) into: samples per thread; for the threads whose name matches {@code --thread} (a
 * regular expression; default: Kafka Streams' stream threads), time by activity, by library
 * (the first non-JDK frame from the top), the hottest methods by self and by inclusive samples,
 * and the callees of {@code --under} methods (where a method's time goes).
 *
 * <p>Java samples are {@code jdk.ExecutionSample}; {@code jdk.NativeMethodSample} (threads in
 * native code: RocksDB's JNI, but also idle waits in epoll) is added with {@code --native}.
 *
 * <pre>
 * java -cp "benchmarks/target/classes:benchmarks/target/lib/*" io.flowkafka.benchmarks.JfrTopFrames \
 *     /tmp/jfr/cnt-flow-t1-xxxx.jfr --native \
 *     --under io.flowkafka.internal.processor.ComputationProcessor.process
 * </pre>
 */
public final class JfrTopFrames {
    private JfrTopFrames() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.err.println("usage: JfrTopFrames FILE.jfr... [--thread REGEX] [--native] [--top N] "
                    + "[--under CLASS.METHOD]... [--driver]");
            System.exit(2);
        }
        List<Path> files = new ArrayList<>();
        String thread = ".*-StreamThread-[0-9]+"; // the stream threads, not their producers' network threads
        boolean nativeSamples = false;
        int top = 25;
        List<String> under = new ArrayList<>();
        Map<String, List<String>> rules = BUCKETS;
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                files.add(Path.of(args[i]));
                continue;
            }
            switch (args[i]) {
                case "--thread" -> thread = args[++i];
                case "--native" -> nativeSamples = true;
                case "--top" -> top = Integer.parseInt(args[++i]);
                case "--under" -> under.add(args[++i]);
                case "--driver" -> { // a test-driver run (DriverBenchmark --jfr): its main thread, driver activities
                    thread = "main";
                    rules = DRIVER_BUCKETS;
                }
                default -> {
                    System.err.println("unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }
        java.util.regex.Pattern threadPattern = java.util.regex.Pattern.compile(thread);
        Map<String, Integer> perThread = new HashMap<>();
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> inclusive = new HashMap<>();
        Map<String, Integer> library = new HashMap<>();
        Map<String, Integer> buckets = new LinkedHashMap<>();
        rules.forEach((name, prefixes) -> buckets.put(name, 0));
        buckets.put("other", 0);
        Map<String, Map<String, Integer>> callees = new LinkedHashMap<>();
        under.forEach(u -> callees.put(u, new HashMap<>()));
        int matched = 0;
        List<RecordedEvent> events = new ArrayList<>();
        for (Path file : files) {
            events.addAll(RecordingFile.readAllEvents(file));
        }
        for (RecordedEvent e : events) {
            String type = e.getEventType().getName();
            boolean isNative = type.equals("jdk.NativeMethodSample");
            if (!type.equals("jdk.ExecutionSample") && !(nativeSamples && isNative)) {
                continue;
            }
            String threadName = e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
            perThread.merge(threadName + (isNative ? " (native)" : ""), 1, Integer::sum);
            if (threadName == null || !threadPattern.matcher(threadName).matches()) {
                continue;
            }
            RecordedStackTrace st = e.getStackTrace();
            if (st == null || st.getFrames().isEmpty()) {
                continue;
            }
            matched++;
            List<RecordedFrame> frames = st.getFrames();
            List<String> methods = new ArrayList<>(frames.size());
            for (RecordedFrame f : frames) {
                methods.add(f.getMethod().getType().getName() + "." + f.getMethod().getName());
            }
            self.merge(methods.get(0), 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            for (String m : methods) {
                if (seen.add(m)) {
                    inclusive.merge(m, 1, Integer::sum);
                }
            }
            library.merge(library(methods), 1, Integer::sum);
            buckets.merge(bucket(rules, methods), 1, Integer::sum);
            for (String u : under) {
                int i = methods.indexOf(u);
                if (i > 0) {
                    callees.get(u).merge(methods.get(i - 1), 1, Integer::sum);
                } else if (i == 0) {
                    callees.get(u).merge("(self)", 1, Integer::sum);
                }
            }
        }
        System.out.println("samples per thread (all threads):");
        print(perThread, 15, -1);
        System.out.printf("%nthreads matching '%s': %d samples%s%n", thread, matched,
                nativeSamples ? " (Java + native)" : " (Java only)");
        System.out.println("\nby library (first non-JDK frame from the top):");
        print(library, top, matched);
        System.out.println("\nby activity (first matching rule, in the order listed; inclusive):");
        for (Map.Entry<String, Integer> b : buckets.entrySet()) {
            System.out.printf("  %6d  %5.1f%%  %s%n", b.getValue(), 100.0 * b.getValue() / Math.max(1, matched), b.getKey());
        }
        System.out.println("\nhottest methods, self:");
        print(self, top, matched);
        System.out.println("\nhottest methods, inclusive:");
        print(inclusive, top, matched);
        for (Map.Entry<String, Map<String, Integer>> e : callees.entrySet()) {
            int total = e.getValue().values().stream().mapToInt(Integer::intValue).sum();
            System.out.printf("%nwhere %s goes (%d samples, %.1f%% of matched):%n", e.getKey(), total,
                    100.0 * total / Math.max(1, matched));
            print(e.getValue(), top, total);
        }
    }

    /**
     * Activities of a stream thread, as method-name prefixes; a sample counts for the first
     * activity (in this order) that any of its frames matches.
     */
    static final Map<String, List<String>> BUCKETS = new LinkedHashMap<>();

    static {
        BUCKETS.put("commit (flush caches and changelogs, producer flush, commit transaction)",
                List.of("org.apache.kafka.streams.processor.internals.StreamThread.maybeCommit"));
        BUCKETS.put("poll (consumer fetch, add records to task queues)",
                List.of("org.apache.kafka.streams.processor.internals.StreamThread.pollPhase"));
        BUCKETS.put("send to topics (serializers, partitioner, producer append)",
                List.of("org.apache.kafka.streams.processor.internals.RecordCollectorImpl.send",
                        "org.apache.kafka.streams.processor.internals.SinkNode.process"));
        BUCKETS.put("state reads (call buffer, cache, RocksDB)",
                List.of("io.flowkafka.internal.processor.CallContext$Accessor.get",
                        "org.apache.kafka.streams.state.internals.MeteredKeyValueStore.get"));
        BUCKETS.put("state writes (cache put)",
                List.of("io.flowkafka.internal.state.KeyStates.commitCall",
                        "org.apache.kafka.streams.state.internals.MeteredKeyValueStore.put"));
        BUCKETS.put("JSON read", List.of("io.flowkafka.internal.serde.JsonRecords.fromJson",
                "com.fasterxml.jackson.databind.ObjectMapper.readTree"));
        BUCKETS.put("JSON write", List.of("io.flowkafka.internal.serde.JsonRecords.toJson",
                "com.fasterxml.jackson.databind.ObjectMapper.writeValueAsBytes"));
        BUCKETS.put("flow: Avro payload/state encode+decode", List.of("io.flowkafka.internal.serde.AvroCodec",
                "io.flowkafka.internal.serde.StateRowCodec", "org.apache.avro"));
        BUCKETS.put("flow: keys (extract, farm_hash, encode/decode, store key)",
                List.of("io.flowkafka.internal.serde.KeyCodec", "io.flowkafka.internal.key.",
                        "io.flowkafka.internal.hash.", "io.flowkafka.internal.state.KeyStates.storeKey"));
        BUCKETS.put("flow: message ids and headers", List.of("io.flowkafka.internal.message.",
                "io.flowkafka.api.MessageId"));
        BUCKETS.put("process function / processor body (the rest of it)", List.of("io.flowkafka.benchmarks."));
        BUCKETS.put("flow: other per-call work (outputs, contexts, dispatch)", List.of("io.flowkafka."));
        BUCKETS.put("Streams per-record overhead (queues, timestamps, metrics, forwarding)",
                List.of("org.apache.kafka.streams.processor.internals.StreamTask.process",
                        "org.apache.kafka.streams.processor.internals.TaskExecutor"));
    }

    /**
     * Activities of a thread running a pipeline on Kafka Streams' TopologyTestDriver ({@code --driver}), which
     * commits after every record it processes and routes every record the task produces (changelogs included)
     * itself; first matching rule wins, as for {@link #BUCKETS}.
     */
    static final Map<String, List<String>> DRIVER_BUCKETS = new LinkedHashMap<>();

    static {
        String ttd = "org.apache.kafka.streams.TopologyTestDriver.";
        String task = "org.apache.kafka.streams.processor.internals.StreamTask.";
        DRIVER_BUCKETS.put("TTD: routing each produced record (regexes of the source topics)",
                List.of(ttd + "getInputTopicOrPatternPartition"));
        DRIVER_BUCKETS.put("TTD: capturing outputs, re-enqueueing internal-topic records",
                List.of(ttd + "captureOutputsAndReEnqueueInternalResults", ttd + "enqueueTaskRecord"));
        DRIVER_BUCKETS.put("TTD: commit after each record: flush caches (-> changelog sends)",
                List.of(task + "prepareCommit"));
        DRIVER_BUCKETS.put("TTD: commit after each record: checkpoint changelog offsets", List.of(task + "postCommit"));
        DRIVER_BUCKETS.put("TTD: commit after each record: transaction", List.of(ttd + "commit"));
        DRIVER_BUCKETS.put("Streams: task readiness (PartitionGroup)", List.of(task + "isProcessable"));
        DRIVER_BUCKETS.put("sends to topics (sink nodes, changelogs, MockProducer)",
                List.of("org.apache.kafka.streams.processor.internals.RecordCollectorImpl.send",
                        "org.apache.kafka.streams.processor.internals.SinkNode.process"));
        DRIVER_BUCKETS.put("flow: timers (scan, store writes)", List.of("io.flowkafka.internal.timers."));
        DRIVER_BUCKETS.put("flow: state (call buffer, store reads/writes)", List.of("io.flowkafka.internal.state.",
                "io.flowkafka.internal.streams.", "io.flowkafka.internal.processor.CallContext$Accessor"));
        DRIVER_BUCKETS.put("flow: JSON (source decode, sink encode)", List.of("io.flowkafka.internal.serde.JsonRecords",
                "com.fasterxml.jackson."));
        DRIVER_BUCKETS.put("flow: Avro payload encode/decode", List.of("io.flowkafka.internal.serde.AvroCodec",
                "org.apache.avro"));
        DRIVER_BUCKETS.put("flow: keys, message ids, headers", List.of("io.flowkafka.internal.serde.KeyCodec",
                "io.flowkafka.internal.key.", "io.flowkafka.internal.hash.", "io.flowkafka.internal.message.",
                "io.flowkafka.api.MessageId"));
        DRIVER_BUCKETS.put("process function (WaitClickJoin)", List.of("io.flowkafka.examples."));
        DRIVER_BUCKETS.put("flow: watermarks", List.of("io.flowkafka.internal.watermarks."));
        DRIVER_BUCKETS.put("flow: processor, rest (dispatch, contexts, outputs)", List.of("io.flowkafka.internal."));
        DRIVER_BUCKETS.put("Streams: per-record processing and punctuation (queues, metrics, forwarding)",
                List.of(task + "process", task + "maybePunctuate", task + "punctuate"));
        DRIVER_BUCKETS.put("FlowTestDriver and piping (TestRecord, enqueue)", List.of("io.flowkafka.testing.",
                ttd + "pipeRecord", "org.apache.kafka.streams.TestInputTopic"));
    }

    static String bucket(List<String> methods) {
        return bucket(BUCKETS, methods);
    }

    static String bucket(Map<String, List<String>> rules, List<String> methods) {
        for (Map.Entry<String, List<String>> b : rules.entrySet()) {
            for (String m : methods) {
                for (String prefix : b.getValue()) {
                    if (m.startsWith(prefix)) {
                        return b.getKey();
                    }
                }
            }
        }
        return "other";
    }

    /** The library a sample's time is charged to: the first frame from the top outside the JDK. */
    static String library(List<String> methods) {
        for (String m : methods) {
            if (m.startsWith("sun.nio.ch.EPoll") || m.startsWith("sun.nio.ch.SocketDispatcher")) {
                return "JDK network I/O (socket read/write, epoll wait)";
            }
            if (m.startsWith("java.") || m.startsWith("jdk.") || m.startsWith("sun.")) {
                continue;
            }
            if (m.startsWith("org.rocksdb.")) {
                return "RocksDB (JNI)";
            }
            if (m.startsWith("com.fasterxml.jackson.")) {
                return "Jackson";
            }
            if (m.startsWith("org.apache.avro.")) {
                return "Avro";
            }
            if (m.startsWith("com.google.common.hash.") || m.startsWith("io.flowkafka.internal.hash.")) {
                return "hashing (farm_hash, message ids)";
            }
            if (m.startsWith("org.apache.kafka.clients.producer.")) {
                return "Kafka producer";
            }
            if (m.startsWith("org.apache.kafka.clients.consumer.")) {
                return "Kafka consumer";
            }
            if (m.startsWith("org.apache.kafka.common.record.") || m.startsWith("org.apache.kafka.common.compress.")
                    || m.startsWith("org.apache.kafka.common.utils.Crc")) {
                return "Kafka record batches (encode/decode, CRC)";
            }
            if (m.startsWith("org.apache.kafka.common.header.")) {
                return "Kafka headers";
            }
            if (m.startsWith("org.apache.kafka.common.network.") || m.startsWith("org.apache.kafka.clients.")) {
                return "Kafka network client";
            }
            if (m.startsWith("org.apache.kafka.common.")) {
                return "Kafka common (serdes, metrics, utils)";
            }
            if (m.startsWith("org.apache.kafka.streams.state.")) {
                return "Kafka Streams state stores (cache, changelog, metered)";
            }
            if (m.startsWith("org.apache.kafka.streams.")) {
                return "Kafka Streams runtime";
            }
            if (m.startsWith("io.flowkafka.benchmarks.")) {
                return "benchmark code (" + m + ")";
            }
            if (m.startsWith("io.flowkafka.")) {
                return "flow-kafka (" + m.substring(0, m.lastIndexOf('.')).replace("io.flowkafka.", "") + ")";
            }
            return m.substring(0, Math.max(0, m.lastIndexOf('.')));
        }
        return "JDK only: " + methods.get(0);
    }

    private static void print(Map<String, Integer> counts, int top, int total) {
        counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(top)
                .forEach(e -> {
                    if (total > 0) {
                        System.out.printf("  %6d  %5.1f%%  %s%n", e.getValue(), 100.0 * e.getValue() / total,
                                e.getKey());
                    } else {
                        System.out.printf("  %6d  %s%n", e.getValue(), e.getKey());
                    }
                });
    }
}
