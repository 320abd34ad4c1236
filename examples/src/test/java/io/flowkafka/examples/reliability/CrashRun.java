package io.flowkafka.examples.reliability;

import io.flowkafka.examples.reliability.CrashSchedule.Fault;
import io.flowkafka.examples.reliability.CrashSchedule.Kind;
import io.flowkafka.examples.reliability.TargetLog.Out;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.PipelineMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One run of the random-crash driver (issue 28, item 1): three instances of {@link CrashPipeline} as child JVMs on
 * the test's broker, seeded traffic for a few seconds, and the seed's {@link CrashSchedule faults} injected while it
 * flows; then the sink's target is read and checked against the inputs.
 *
 * <p>The checks keep Flow's rules (reference 002, "Consumers get the result of processing each input message
 * exactly once, with no losses or duplicates"; reference 003, "The processing result and the timer deletion are
 * recorded in a single transaction"; reference 000, key visitor guarantees, "Each key per period | You get exactly
 * one visit per key (no duplicates or omissions)" and "Worker restart | Coverage is preserved; rotation is atomic,
 * and a crash keeps the old pass"):
 * <ul>
 *   <li>every input has exactly one output, with its user and a running count: each user's counts are 1..n;</li>
 *   <li>every timer (one per input) fired exactly once;</li>
 *   <li>every user is visited exactly once in each pass it was present through: a pass of its partition whose
 *       previous pass had a visit delivered after the user's first output (so that previous pass ended, and this
 *       one began, after the user's state was committed; the user's output and the visits come from the same task
 *       and outbox partition, delivered in commit order; users are never deleted), up to the last pass seen (still
 *       running when the run stops); and no (user, pass) twice in any pass;</li>
 *   <li>the target holds each of these once (it is read read_committed: what a consumer sees).</li>
 * </ul>
 */
final class CrashRun {
    static final int INSTANCES = 3;
    static final int USERS = 200;

    private final KafkaCluster cluster;
    private final String pipeline;
    private final String input;
    private final String output;
    private final Path root;
    private final long seed;
    private final CrashSchedule schedule;
    private final long trafficMs;
    private final int ratePerSecond;
    private final String visitorPeriod;

    /** Inputs in the order written. */
    private final List<Input> inputs = new ArrayList<>();
    private final ChildJvm[] slots = new ChildJvm[INSTANCES];
    private final String[] slotNames = new String[INSTANCES];
    private final List<ChildJvm> all = new ArrayList<>();
    private final Map<Kind, Integer> injected = new EnumMap<>(Kind.class);
    /** Wall-clock ms of each fault as injected, with its kind. */
    private final List<Map.Entry<Long, Kind>> injectedAt = new ArrayList<>();
    private int instanceCounter;

    /** One input written: its index i (id {@code m-i}), user and when it was sent. */
    private record Input(int index, String user, long sentMs) {
        String id() {
            return "m-" + index;
        }
    }

    CrashRun(KafkaCluster cluster, String prefix, Path root, long seed, long trafficMs, int ratePerSecond,
            List<Kind> kinds, String visitorPeriod) {
        this.cluster = cluster;
        this.pipeline = prefix + "-p";
        this.input = prefix + "-in";
        this.output = prefix + "-out";
        this.root = root;
        this.seed = seed;
        this.trafficMs = trafficMs;
        this.ratePerSecond = ratePerSecond;
        this.visitorPeriod = visitorPeriod;
        this.schedule = CrashSchedule.draw(seed, trafficMs, INSTANCES, kinds);
    }

    CrashSchedule schedule() {
        return schedule;
    }

    /** Runs the pipeline through the schedule, checks the target, and returns the figures. */
    CrashFigures run() throws Exception {
        cluster.createTopic(input, 4);
        cluster.createTopic(output, 4, Map.of("message.timestamp.type", "LogAppendTime"));
        Files.createDirectories(control());
        try (KafkaProducer<String, String> producer = producer(); TargetLog target = new TargetLog(cluster, output)) {
            for (int u = 0; u < USERS; u++) {
                send(producer, "u" + u, -1);
            }
            producer.flush();
            List<ChildJvm> starting = new ArrayList<>();
            for (int s = 0; s < INSTANCES; s++) {
                starting.add(launch(s));
            }
            for (ChildJvm child : starting) {
                child.awaitOutputLine(l -> l.contains(PipelineMain.RUNNING_LINE), Duration.ofMinutes(2));
            }
            AtomicReference<Throwable> trafficError = new AtomicReference<>();
            long start = System.currentTimeMillis();
            Thread traffic = new Thread(() -> {
                try {
                    traffic(producer, start);
                } catch (Throwable e) {
                    trafficError.set(e);
                }
            }, "crash-traffic");
            traffic.start();
            for (Fault fault : schedule.faults()) {
                pace(start + fault.atMs());
                inject(fault);
            }
            traffic.join();
            if (trafficError.get() != null) {
                throw new AssertionError("seed " + seed + ": the input traffic failed", trafficError.get());
            }
            long tailMs = System.currentTimeMillis() + 3_600_000L;
            for (int p = 0; p < 4; p++) { // carries every input partition's watermark past every timer
                send(producer, CrashPipeline.TAIL_PREFIX + p, p, tailMs);
            }
            producer.flush();
            return check(target);
        } finally {
            for (ChildJvm child : all) {
                child.close();
            }
        }
    }

    private void traffic(KafkaProducer<String, String> producer, long start) throws InterruptedException {
        Random random = new Random(seed * 31 + 1);
        long total = trafficMs * ratePerSecond / 1000;
        for (long n = 0; n < total; n++) {
            pace(start + n * 1000 / ratePerSecond);
            send(producer, "u" + random.nextInt(USERS), -1);
        }
        producer.flush();
    }

    /** Sleeps until a wall-clock moment of the schedule (pacing, not waiting for a condition). */
    private static void pace(long atMs) throws InterruptedException {
        long ms = atMs - System.currentTimeMillis();
        if (ms > 0) {
            Thread.sleep(ms); // paces the traffic at its rate: not a wait for a condition
        }
    }

    private void send(KafkaProducer<String, String> producer, String user, int partition) {
        send(producer, user, partition, System.currentTimeMillis());
    }

    private void send(KafkaProducer<String, String> producer, String user, int partition, long eventMs) {
        Input in;
        synchronized (inputs) {
            in = new Input(inputs.size(), user, System.currentTimeMillis());
            inputs.add(in);
        }
        long ts = eventMs * CrashPipeline.INDEX_MODULUS + in.index();
        String json = "{\"id\":\"" + in.id() + "\",\"user\":\"" + user + "\",\"ts\":" + ts + "}";
        ProducerRecord<String, String> record = partition < 0 ? new ProducerRecord<>(input, user, json)
                : new ProducerRecord<>(input, partition, user, json);
        producer.send(record, (md, e) -> {
            if (e != null) {
                throw new IllegalStateException("seed " + seed + ": input " + in.id() + " not written", e);
            }
        });
    }

    private void inject(Fault fault) throws IOException {
        int slot = fault.slot();
        long at = System.currentTimeMillis();
        switch (fault.kind()) {
            case KILL -> {
                slots[slot].kill();
                System.out.printf("crash seed %d: SIGKILL %s at +%d ms%n", seed, slotNames[slot], fault.atMs());
                launch(slot).awaitOutputLine(l -> l.contains(PipelineMain.RUNNING_LINE), Duration.ofMinutes(2));
            }
            case THREAD -> Files.writeString(control().resolve(slotNames[slot] + "." + CrashMain.THREAD), "");
            case REVIVE -> Files.writeString(control().resolve(slotNames[slot] + "." + CrashMain.REVIVE), "");
            default -> throw new IllegalStateException("unknown fault " + fault);
        }
        injectedAt.add(Map.entry(at, fault.kind()));
    }

    private ChildJvm launch(int slot) {
        String name = "i" + instanceCounter++;
        ChildJvm child = ChildJvm.builder(CrashMain.class).maxHeap("256m")
                .args(cluster.bootstrapServers(), pipeline, input, output, root.resolve("state-" + name).toString(),
                        control().toString(), name, visitorPeriod)
                .logFile(root.resolve(name + ".log")).start();
        all.add(child);
        slots[slot] = child;
        slotNames[slot] = name;
        return child;
    }

    private Path control() {
        return root.resolve("control");
    }

    private KafkaProducer<String, String> producer() {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(p);
    }

    private CrashFigures check(TargetLog target) throws IOException {
        Map<String, Input> byId = new HashMap<>();
        Map<String, Input> byTimerId = new HashMap<>();
        for (Input in : inputs) {
            byId.put(in.id(), in);
            if (!in.user().startsWith(CrashPipeline.TAIL_PREFIX)) {
                byTimerId.put("t-" + in.id(), in);
            }
        }
        Map<String, List<Out>> got = target.byId();
        List<String> problems = new ArrayList<>();
        try {
            Await.until(Duration.ofMinutes(4), "seed " + seed + ": an output for each of " + byId.size()
                    + " inputs and each of " + byTimerId.size() + " timers in " + output, () -> {
                        target.poll();
                        return got.keySet().containsAll(byId.keySet())
                                && got.keySet().containsAll(byTimerId.keySet());
                    });
            Map<Integer, Long> passAtEnd = maxPassByPartition(got);
            Await.until(Duration.ofMinutes(2), "seed " + seed + ": two more visitor passes on every partition after "
                    + passAtEnd, () -> {
                        target.poll();
                        Map<Integer, Long> now = maxPassByPartition(got);
                        return now.size() == 4 && now.entrySet().stream()
                                .allMatch(e -> e.getValue() >= passAtEnd.getOrDefault(e.getKey(), 0L) + 2);
                    });
        } catch (AssertionError stalled) { // the figures below say what is missing; the thread dumps say why
            problems.add(stalled.getMessage() + "; thread dumps of the live instances in " + root);
            dumpThreads();
        }
        target.drain(Duration.ofMinutes(1));
        int lost = 0;
        int duplicated = 0;
        int wrong = 0;
        Map<String, TreeSet<Long>> counts = new HashMap<>();
        Map<String, Integer> perUser = new HashMap<>();
        for (Input in : inputs) {
            perUser.merge(in.user(), 1, Integer::sum);
            List<Out> outs = got.getOrDefault(in.id(), List.of());
            if (outs.isEmpty()) {
                lost++;
                note(problems, "lost " + in.id());
            } else if (outs.size() > 1) {
                duplicated++;
                note(problems, "duplicated " + in.id() + ": " + outs);
            }
            for (Out o : outs) {
                if (!o.user().equals(in.user()) || !o.kind().equals("message")) {
                    wrong++;
                    note(problems, "wrong output for " + in + ": " + o);
                }
                counts.computeIfAbsent(in.user(), u -> new TreeSet<>()).add(o.count());
            }
        }
        for (Map.Entry<String, Integer> e : perUser.entrySet()) {
            TreeSet<Long> c = counts.getOrDefault(e.getKey(), new TreeSet<>());
            if (c.size() != e.getValue() || c.first() != 1L || c.last() != e.getValue().longValue()) {
                wrong++;
                note(problems, "user " + e.getKey() + " has counts " + c + " for " + e.getValue() + " inputs");
            }
        }
        int timersLost = 0;
        int timersDouble = 0;
        for (Map.Entry<String, Input> e : byTimerId.entrySet()) {
            List<Out> outs = got.getOrDefault(e.getKey(), List.of());
            if (outs.isEmpty()) {
                timersLost++;
                note(problems, "timer never fired " + e.getKey());
            } else if (outs.size() > 1) {
                timersDouble++;
                note(problems, "timer fired " + outs.size() + " times: " + outs);
            }
            for (Out o : outs) {
                if (!o.user().equals(e.getValue().user())) {
                    wrong++;
                    note(problems, "wrong timer output for " + e.getValue() + ": " + o);
                }
            }
        }
        // visits: (user, pass) -> count; partition of each user; passes per partition
        Map<String, Map<Long, Integer>> visits = new TreeMap<>();
        Map<String, Integer> partitionOf = new HashMap<>();
        Map<Integer, TreeSet<Long>> passes = new TreeMap<>();
        int visitsDuplicated = 0;
        for (Map.Entry<String, List<Out>> e : got.entrySet()) {
            if (!e.getKey().startsWith("v-")) {
                if (!byId.containsKey(e.getKey()) && !byTimerId.containsKey(e.getKey())) {
                    wrong++;
                    note(problems, "unexpected output " + e.getValue());
                }
                continue;
            }
            Out o = e.getValue().get(0);
            if (e.getValue().size() > 1) {
                visitsDuplicated++;
                note(problems, "visited " + e.getValue().size() + " times: " + e.getValue());
            }
            visits.computeIfAbsent(o.user(), u -> new HashMap<>()).merge(o.pass(), e.getValue().size(), Integer::sum);
            partitionOf.put(o.user(), o.partition());
            passes.computeIfAbsent(o.partition(), p -> new TreeSet<>()).add(o.pass());
        }
        // a pass is checked for a user once the pass before it had a visit called after the call that created the
        // user: that pass ended after the user's state was written, so the user existed through the whole pass. Call
        // times, not the target's append times: one outbox delivery transaction appends to several target
        // partitions in any order, so a visit committed before the user may be appended after its output
        Map<String, Long> createdMs = new HashMap<>();
        Map<Integer, Map<Long, Long>> passStartedBeforeMs = new HashMap<>();
        for (List<Out> outs : got.values()) {
            for (Out o : outs) {
                if (o.kind().equals("message")) {
                    createdMs.merge(o.user(), o.calledMs(), Math::min);
                } else if (o.kind().equals("visit")) {
                    passStartedBeforeMs.computeIfAbsent(o.partition(), p -> new HashMap<>())
                            .merge(o.pass(), o.calledMs(), Math::min);
                }
            }
        }
        int visitsChecked = 0;
        int keysMissed = 0;
        for (int u = 0; u < USERS; u++) {
            String user = "u" + u;
            Integer partition = partitionOf.get(user);
            if (partition == null) {
                keysMissed++;
                note(problems, "user " + user + " never visited");
                continue;
            }
            TreeSet<Long> seen = passes.get(partition);
            Map<Long, Long> firstVisit = passStartedBeforeMs.get(partition);
            for (long pass = seen.first() + 1; pass < seen.last(); pass++) {
                Long before = firstVisit.get(pass - 1);
                Long created = createdMs.get(user);
                if (before == null || created == null || before <= created) { // no output: counted as lost
                    continue;
                }
                visitsChecked++;
                if (visits.get(user).getOrDefault(pass, 0) == 0) {
                    keysMissed++;
                    note(problems, "user " + user + " (partition " + partition + ", first output at " + createdMs
                            .get(user) + " ms, call time) not visited in pass " + pass + " (passes seen there " + seen.first()
                            + ".." + seen.last() + ", pass " + (pass - 1) + " first visit at " + before + " ms)");
                }
            }
        }
        Map<Kind, Long> recovery = new EnumMap<>(Kind.class);
        List<Long> latencies = new ArrayList<>();
        for (Input in : inputs) {
            List<Out> outs = got.get(in.id());
            if (outs == null) {
                continue;
            }
            long latency = outs.get(0).appendMs() - in.sentMs();
            latencies.add(latency);
            for (Map.Entry<Long, Kind> f : injectedAt) {
                if (in.sentMs() >= f.getKey() - 2_000 && in.sentMs() <= f.getKey() + 8_000) {
                    recovery.merge(f.getValue(), latency, Math::max);
                }
            }
        }
        latencies.sort(null);
        countInjected();
        return new CrashFigures(seed, schedule, Map.copyOf(injected), inputs.size(), lost, duplicated,
                byTimerId.size(), timersLost, timersDouble, visitsChecked, keysMissed, visitsDuplicated, wrong,
                Map.copyOf(recovery), latencies.isEmpty() ? 0 : latencies.get(latencies.size() / 2),
                List.copyOf(problems));
    }

    /** Writes {@code jcmd Thread.print} of each live instance next to its log, for a run that stalled. */
    private void dumpThreads() {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        for (int s = 0; s < INSTANCES; s++) {
            if (slots[s] != null && slots[s].isAlive()) {
                try {
                    new ProcessBuilder(jcmd.toString(), Long.toString(slots[s].pid()), "Thread.print")
                            .redirectErrorStream(true).redirectOutput(root.resolve(slotNames[s] + ".threads").toFile())
                            .start().waitFor();
                } catch (IOException e) {
                    System.out.println("cannot dump the threads of " + slots[s] + ": " + e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void countInjected() throws IOException {
        injected.put(Kind.KILL, (int) schedule.faults().stream().filter(f -> f.kind() == Kind.KILL).count());
        int thrown = 0;
        int revived = 0;
        for (ChildJvm child : all) {
            for (String line : Files.readAllLines(child.logFile())) {
                if (line.startsWith("FAULT thread thrown")) {
                    thrown++;
                } else if (line.startsWith("FAULT revive aborted")) {
                    revived++;
                }
            }
        }
        injected.put(Kind.THREAD, thrown);
        injected.put(Kind.REVIVE, revived);
    }

    private static Map<Integer, Long> maxPassByPartition(Map<String, List<Out>> got) {
        Map<Integer, Long> max = new HashMap<>();
        for (Map.Entry<String, List<Out>> e : got.entrySet()) {
            if (e.getKey().startsWith("v-")) {
                Out o = e.getValue().get(0);
                max.merge(o.partition(), o.pass(), Math::max);
            }
        }
        return max;
    }

    private static void note(List<String> problems, String problem) {
        if (problems.size() < 20) {
            problems.add(problem);
        }
    }
}
