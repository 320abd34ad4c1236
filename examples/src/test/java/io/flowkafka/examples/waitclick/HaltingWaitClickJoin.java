package io.flowkafka.examples.waitclick;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Test-only fault injection: {@link WaitClickJoin} that kills its own JVM with {@code SIGKILL} (no
 * shutdown hooks, no flush, no transaction end) inside {@code onTimer}, in the middle of a
 * timer-firing punctuation step; {@link Runtime#halt} only if no {@code kill} command can.
 *
 * <p>It halts at the first timer that is at least the {@code atTimer}-th fired by this JVM, is
 * fired by a punctuation (not by a watermark update in {@code process}), has at least
 * {@code inStep - 1} timers of the same step fired before it, and at least one of those emitted
 * a result. Those results were forwarded to the task's producer but not committed. Before
 * halting it waits (bounded) until they are on the broker, read_uncommitted beyond the last stable
 * offset, so the transaction the halt leaves open really holds them; then it prints
 * {@value #HALT_LINE} with the numbers and the step's result ids on {@value #STEP_RESULTS_LINE}.
 *
 * <p>Steps are told apart by the {@code flow.timers.fired} counter of the task, which the runtime
 * increments once at the end of each step: timers fired while it does not move belong to the same
 * step.
 *
 * <p>Configured through static fields by {@link WaitClickMain} in a child JVM; one instance per
 * task, on its stream thread.
 */
final class HaltingWaitClickJoin implements RowFunction {
    /** The start of the line printed just before halting. */
    static final String HALT_LINE = "HALTING inside a timer-firing punctuation";
    /** The start of the line listing the impression ids whose results the halted step had sent. */
    static final String STEP_RESULTS_LINE = "HALTED STEP RESULTS ";
    /** The exit status of a JVM killed with SIGKILL (128 + 9), as this one ends itself. */
    static final int KILLED_STATUS = 137;
    /** The exit status if no {@code kill} command could end the JVM (it then halts). */
    static final int HALT_STATUS = 77;

    /** Set before start: halt at or after this timer fired by the JVM, counted from 1; {@code <= 0} never. */
    static volatile long atTimer = -1;
    /** Set before start: the least position of the halting timer within its step, counted from 1. */
    static volatile int inStep = 2;
    static volatile MeterRegistry meters;
    static volatile String bootstrapServers;
    static volatile String resultsTopic;

    private static final AtomicLong FIRED = new AtomicLong();

    private final WaitClickJoin join = new WaitClickJoin();
    private double lastCount = Double.NaN;
    private int firedInStep;
    private final List<String> stepResults = new ArrayList<>();

    /** {@code spec} with the join computation's function replaced by this one. */
    static PipelineSpec halting(PipelineSpec spec) {
        Map<String, ComputationSpec> computations = new LinkedHashMap<>(spec.computations());
        ComputationSpec c = computations.get("join");
        computations.put("join", new ComputationSpec(c.id(), c.kind(), null, HaltingWaitClickJoin::new,
                c.inputStreamIds(), c.outputStreamIds(), c.sourceStreams(), c.sinks(), c.groupBySchema(), c.states(),
                c.timers(), c.keyVisitorStreams(), c.streamsDependency(), c.processingMode(), c.parameters(),
                c.desiredPartitionCount(), c.watermarkStrategy()));
        return new PipelineSpec(spec.name(), spec.streams(), computations, spec.warnings());
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        join.onMessage(message, output, context);
    }

    @Override
    public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
        long n = FIRED.incrementAndGet();
        double count = firedCounter(context).count();
        if (count != lastCount) { // the previous step ended: this timer is the first of a new one
            lastCount = count;
            firedInStep = 0;
            stepResults.clear();
        }
        firedInStep++;
        long target = atTimer;
        if (target > 0 && n >= target && firedInStep >= inStep && !stepResults.isEmpty()) {
            List<String> frames = punctuationFrames();
            if (!frames.isEmpty()) {
                halt(n, context.getPartition(), frames);
            }
        }
        join.onTimer(timer, new Recording(output), context);
    }

    private void halt(long n, int partition, List<String> frames) {
        Set<String> onBroker = uncommittedOnBroker(new HashSet<>(stepResults), Duration.ofSeconds(5));
        System.out.println(HALT_LINE + ": timer " + n + " fired by this JVM, " + firedInStep
                + " of its step on task join/" + partition + "; " + (firedInStep - 1) + " timers of the step fired "
                + "before it, " + stepResults.size() + " results of the step sent, " + onBroker.size()
                + " of them on the broker uncommitted; via " + String.join(" < ", frames));
        System.out.println(STEP_RESULTS_LINE + String.join(",", onBroker));
        System.out.flush();
        // SIGKILL, as an operator's kill -9 or the kernel's OOM killer would: no shutdown hook, no close, no flush
        try {
            new ProcessBuilder("kill", "-KILL", Long.toString(ProcessHandle.current().pid())).start()
                    .waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            Thread.sleep(10_000); // the signal ends this JVM before this returns
        } catch (Exception e) {
            // no kill command: end as abruptly as Java can, saying why the exit status is not SIGKILL's
            System.out.println("no SIGKILL (" + e + "); halting with status " + HALT_STATUS);
            System.out.flush();
        }
        Runtime.getRuntime().halt(HALT_STATUS);
    }

    /** The task's {@code flow.timers.fired} counter (the runtime registers it when the task starts). */
    private static Counter firedCounter(RuntimeContext context) {
        return meters.get("flow.timers.fired").tag("computation", context.getComputationId())
                .tag("partition", Integer.toString(context.getPartition())).counter();
    }

    /**
     * The frames that show this call is a timer step run by a punctuation, innermost first; empty
     * if it is not (a step run by {@code process} on a watermark update).
     */
    private static List<String> punctuationFrames() {
        List<String> frames = StackWalker.getInstance().walk(s -> s
                .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
                .filter(f -> f.startsWith("ComputationTask.fire") || f.equals("StreamTask.punctuate")
                        || f.equals("ComputationProcessor.process"))
                .distinct().toList());
        boolean punctuation = frames.contains("StreamTask.punctuate") && frames.contains("ComputationTask.fireOne")
                && !frames.contains("ComputationProcessor.process");
        return punctuation ? frames : List.of();
    }

    /**
     * Which of {@code ids} can be read read_uncommitted from the results topic beyond each
     * partition's last stable offset, waiting up to {@code bound} for the producer to send them.
     */
    private static Set<String> uncommittedOnBroker(Set<String> ids, Duration bound) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Set<String> seen = new HashSet<>();
        long deadline = System.nanoTime() + bound.toNanos();
        try (Admin admin = Admin.create(p); KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p,
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            consumer.partitionsFor(resultsTopic, Duration.ofSeconds(2))
                    .forEach(i -> latest.put(new TopicPartition(resultsTopic, i.partition()), OffsetSpec.latest()));
            var stable = admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get();
            consumer.assign(latest.keySet());
            stable.forEach((tp, info) -> consumer.seek(tp, info.offset()));
            while (!seen.containsAll(ids) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    String id = new String(r.key(), java.nio.charset.StandardCharsets.UTF_8);
                    if (ids.contains(id)) {
                        seen.add(id);
                    }
                }
            }
        } catch (Exception e) {
            System.out.println("could not read the results topic before halting: " + e);
        }
        return seen;
    }

    /** Passes everything on, noting the impression id of each result. */
    private final class Recording implements OutputCollector {
        private final OutputCollector output;

        Recording(OutputCollector output) {
            this.output = output;
        }

        @Override
        public void addMessage(Message message) {
            stepResults.add(message.getPayload().get("impression_id").toString());
            output.addMessage(message);
        }

        @Override
        public void addTimer(long triggerTimestamp, long eventTimestamp) {
            output.addTimer(triggerTimestamp, eventTimestamp);
        }

        @Override
        public void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp) {
            output.addTimer(timerStreamId, triggerTimestamp, eventTimestamp);
        }

        @Override
        public OutputCollector withParentIds(List<MessageId> parentIds) {
            return output.withParentIds(parentIds);
        }
    }
}
