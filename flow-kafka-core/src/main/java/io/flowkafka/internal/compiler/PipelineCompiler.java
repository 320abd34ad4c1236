package io.flowkafka.internal.compiler;

import io.flowkafka.internal.external.ExternalTopics;
import io.flowkafka.internal.processor.ComputationPlan;
import io.flowkafka.internal.processor.ComputationProcessor;
import io.flowkafka.internal.source.KafkaSourceParameters;
import io.flowkafka.internal.source.PartitionFilter;
import io.flowkafka.internal.source.ServiceLogScan;
import io.flowkafka.internal.source.ServiceLogSource;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SourceSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.AutoOffsetReset;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiles a validated {@link PipelineSpec} into a Kafka Streams {@link Topology}.
 *
 * <p>Model: a computation becomes one sub-topology: a source node per input topic, one
 * {@link ComputationProcessor} owning the computation's state store, and a sink node per output
 * topic. Computations are connected only through topics, so Kafka Streams schedules each as its
 * own set of tasks, one per partition.
 *
 * <p>An internal stream is the topic {@code <prefix><pipeline>.<stream>}, keyed by the group-by
 * key of the computations reading it and range-partitioned by its hash. A stream read by several
 * computations is written once per reader, since Kafka Streams lets a topic feed only one source
 * node: the first reader reads {@code <pipeline>.<stream>}, the others
 * {@code <pipeline>.<stream>.<consumer>}. A stream that nothing reads and no sink writes out is
 * still materialized as {@code <pipeline>.<stream>} (keyed by the empty key), so it can be read.
 *
 * <p>Names derive from spec ids only, so an unchanged spec reuses its state on restart:
 * {@code <computation>.source.<topic>}, {@code <computation>.process},
 * {@code <computation>.sink.<topic>}, store {@code <computation>.state}.
 */
public final class PipelineCompiler {
    private static final Logger LOG = LoggerFactory.getLogger(PipelineCompiler.class);

    private PipelineCompiler() {
    }

    /** The topic of a stream. */
    public static String streamTopic(String topicPrefix, String pipeline, String stream) {
        return topicPrefix + pipeline + "." + stream;
    }

    /** The status topic of a pipeline: one record per task when it completes. */
    public static String statusTopic(String topicPrefix, String pipeline) {
        return topicPrefix + pipeline + ".status";
    }

    /** The control topic of a computation without inputs: it gives the computation its tasks. */
    public static String controlTopic(String topicPrefix, String pipeline, String computation) {
        return topicPrefix + pipeline + ".control." + computation;
    }

    /**
     * On the test driver every topic has the one partition 0: a {@code partition_filter} without it skips every
     * record piped in (a filtered task's behaviour), which a test of the pipeline's output seldom means.
     */
    private static void warnOfFiltersWithoutPartitionZero(PipelineSpec spec) {
        for (ComputationSpec c : spec.computations().values()) {
            for (SourceSpec source : c.sourceStreams()) {
                PartitionFilter filter = KafkaSourceParameters.partitionFilter(source);
                if (filter != null && !filter.accepts(0)) {
                    LOG.warn("pipeline '{}', computation '{}', source '{}': partition_filter {} leaves out partition "
                            + "0, the test driver's only partition: every record piped in is skipped, as a task of a "
                            + "filtered partition skips them; test the output without partition_filter, or with one "
                            + "that keeps 0", spec.name(), c.id(), source.streamId(), filter);
                }
            }
        }
    }

    /**
     * The outbox topic of an async sink: {@code <prefix><pipeline>.outbox.<sink>} (with the
     * computation's id before the sink's when two computations have sinks of the same id).
     */
    public static String outboxTopic(String topicPrefix, String pipeline, String sink) {
        return topicPrefix + pipeline + ".outbox." + sink;
    }

    /** The dead-letter topic of a pipeline. */
    public static String deadLetterTopic(String topicPrefix, String pipeline) {
        return topicPrefix + pipeline + ".dlq";
    }

    /**
     * Compiles the spec, which must be valid.
     *
     * @param persistentStores RocksDB stores (true) or in-memory stores (tests, benchmarks)
     */
    public static CompiledPipeline compile(PipelineSpec spec, String topicPrefix, boolean persistentStores) {
        return compile(spec, CompileOptions.defaults().with(topicPrefix, persistentStores));
    }

    /** Compiles the spec, which must be valid, with the given deployment options. */
    public static CompiledPipeline compile(PipelineSpec spec, CompileOptions options) {
        String topicPrefix = options.topicPrefix();
        boolean persistentStores = options.persistentStores();
        boolean singleTask = options.singleTask();
        boolean changelogs = options.changelogs();
        if (singleTask) {
            warnOfFiltersWithoutPartitionZero(spec);
        }
        // one cache for the state and timer stores of every task of this topology (statestore.cache.max.bytes)
        io.flowkafka.internal.streams.WriteBackStore.Budget storeCache = new io.flowkafka.internal.streams.WriteBackStore.Budget();
        io.flowkafka.internal.watermarks.PartitionCounts counts =
                new io.flowkafka.internal.watermarks.PartitionCounts(singleTask);
        Map<String, List<String>> sourceTopicsByComputation = new LinkedHashMap<>();
        io.flowkafka.internal.watermarks.FiniteSources finite = new io.flowkafka.internal.watermarks.FiniteSources();
        Map<String, String> alignmentGroups = new LinkedHashMap<>();
        Map<String, Long> driftNanos = new LinkedHashMap<>();
        Map<String, Long> alignedIdleMs = new LinkedHashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            String group = c.watermarkStrategy().alignmentGroup();
            if (group != null && !c.sourceStreams().isEmpty()) {
                alignmentGroups.put(c.id(), group);
                driftNanos.putIfAbsent(group, c.watermarkStrategy().driftBound().toNanos());
                alignedIdleMs.put(c.id(), c.watermarkStrategy().idleDuration().toMillis());
            }
        }
        io.flowkafka.internal.watermarks.WatermarkAlignment alignment =
                new io.flowkafka.internal.watermarks.WatermarkAlignment(alignmentGroups, driftNanos, alignedIdleMs);
        io.flowkafka.internal.watermarks.SourceIdleness sourceIdleness = new io.flowkafka.internal.watermarks.SourceIdleness();
        String statusTopic = statusTopic(topicPrefix, spec.name());
        String pipeline = spec.name();
        Map<String, Integer> internalTopics = new LinkedHashMap<>();
        Map<String, Integer> sinkTopics = new LinkedHashMap<>();
        List<String> sourceTopics = new ArrayList<>();
        Map<String, List<String>> streamTopics = new LinkedHashMap<>();
        // for each stream and each consumer: the topic it reads
        Map<String, Map<String, String>> readTopic = new LinkedHashMap<>();
        // for each stream: the internal routes (topic -> consumer group-by)
        Map<String, List<ComputationPlan.InternalRoute>> internalRoutes = new LinkedHashMap<>();
        // async sinks: "<computation>/<sink>" -> outbox topic; outbox topic -> partitions
        Map<String, String> outboxTopics = new LinkedHashMap<>();
        Map<String, Integer> outboxPartitions = new LinkedHashMap<>();
        List<CompiledPipeline.AsyncSink> asyncSinks = new ArrayList<>();
        Map<String, io.flowkafka.internal.outbox.AtMostOnceQueue> atMostOnceQueues = new LinkedHashMap<>();
        Map<String, io.flowkafka.internal.outbox.SyncSinkSlot> syncSlots = new LinkedHashMap<>();
        ComputationPlan.VisitorRuntime visitors = options.visitors() != null ? options.visitors()
                : new ComputationPlan.VisitorRuntime(100, 10_000, 50, new io.flowkafka.internal.config.DynamicSpec(spec),
                        new io.flowkafka.internal.status.StatusBoard(),
                        new io.micrometer.core.instrument.simple.SimpleMeterRegistry());

        for (String stream : spec.streams().keySet()) {
            ComputationSpec writer = spec.writerOf(stream).orElse(null);
            if (writer == null) {
                continue;
            }
            boolean fromSource = writer.sourceStreams().stream().anyMatch(s -> s.streamId().equals(stream))
                    && !writer.outputStreamIds().contains(stream);
            if (fromSource) {
                continue; // a source stream is read from the user's topic by its own computation
            }
            List<ComputationSpec> readers = spec.readersOf(stream);
            List<ComputationPlan.InternalRoute> routes = new ArrayList<>();
            Map<String, String> byConsumer = new LinkedHashMap<>();
            // One topic per reader: Kafka Streams lets a topic feed only one source node of a topology, so two
            // computations cannot share a topic even when their keys and partition counts are the same.
            for (ComputationSpec reader : readers) {
                String topic = byConsumer.isEmpty()
                        ? streamTopic(topicPrefix, pipeline, stream)
                        : streamTopic(topicPrefix, pipeline, stream) + "." + reader.id();
                internalTopics.put(topic, reader.desiredPartitionCount());
                routes.add(new ComputationPlan.InternalRoute(writer.id() + ".sink." + topic, topic,
                        reader.groupBySchema(), reader.id()));
                byConsumer.put(reader.id(), topic);
            }
            boolean hasSink = writer.sinks().stream().anyMatch(s -> s.inputStreamIds().contains(stream));
            if (readers.isEmpty() && !hasSink) {
                String topic = streamTopic(topicPrefix, pipeline, stream);
                internalTopics.put(topic, partitionsOf(writer, spec));
                routes.add(new ComputationPlan.InternalRoute(writer.id() + ".sink." + topic, topic, List.of(), writer.id()));
            }
            internalRoutes.put(stream, routes);
            readTopic.put(stream, byConsumer);
            routes.forEach(r -> streamTopics.computeIfAbsent(stream, s -> new ArrayList<>()).add(r.topic()));
        }

        Topology topology = new Topology();
        io.flowkafka.internal.external.ExternalTopics external =
                io.flowkafka.internal.external.ExternalTopics.of(spec, topicPrefix);
        // one global store per external table topic read, shared by every reader of the pipeline
        external.readTopics().keySet().forEach(topic ->
                io.flowkafka.internal.external.TableStore.addTo(topology, topic, persistentStores));
        // table topics with a global store (service-log sources add theirs)
        java.util.Set<String> tableStores = new java.util.HashSet<>(external.readTopics().keySet());
        for (ComputationSpec c : spec.computations().values()) {
            if (c.sourceStreams().isEmpty() || !ServiceLogSource.readsTopics(c)) {
                counts.put(c.id(), c.desiredPartitionCount()); // no topic: desired_partition_count tasks
            } else {
                List<String> topics = new ArrayList<>();
                c.sourceStreams().forEach(s -> topics.addAll(topicsOf(s)));
                sourceTopicsByComputation.put(c.id(), topics);
            }
        }
        for (ComputationSpec c : spec.computations().values()) {
            Map<String, ComputationPlan.Input> inputs = new LinkedHashMap<>();
            Map<String, Schema> inputSchemas = new LinkedHashMap<>();
            for (SourceSpec source : c.sourceStreams()) {
                for (String topic : topicsOf(source)) {
                    inputs.put(topic, new ComputationPlan.Input(topic, source.streamId(), source));
                    if (!sourceTopics.contains(topic)) {
                        sourceTopics.add(topic);
                    }
                }
                inputSchemas.put(source.streamId(), schemaOf(spec, source.streamId()));
            }
            for (String stream : c.inputStreamIds()) {
                String topic = readTopic.get(stream).get(c.id());
                inputs.put(topic, new ComputationPlan.Input(topic, stream, null));
                inputSchemas.put(stream, schemaOf(spec, stream));
            }
            Map<String, List<ComputationPlan.Route>> outputs = new LinkedHashMap<>();
            Map<String, Schema> outputSchemas = new LinkedHashMap<>();
            for (String stream : c.outputStreamIds()) {
                outputSchemas.put(stream, schemaOf(spec, stream));
                List<ComputationPlan.Route> routes = new ArrayList<>(internalRoutes.getOrDefault(stream, List.of()));
                for (SinkSpec sink : c.sinks()) {
                    if (!sink.inputStreamIds().contains(stream)) {
                        continue;
                    }
                    io.flowkafka.spi.SinkProvider provider = io.flowkafka.internal.outbox.Sinks.provider(sink.sinkClassName());
                    boolean staged = provider != null && provider.synchronous(sink) && provider.staged(sink);
                    if (provider != null && provider.synchronous(sink) && !singleTask) {
                        // a synchronous external sink: records sent after each call by the runtime's writer, the epoch
                        // waiting for their acknowledgements (on the test driver: written to its topic like KafkaSink)
                        String name = c.id() + "/" + sink.id();
                        io.flowkafka.internal.outbox.SyncSinkSlot slot = syncSlots.computeIfAbsent(name, k -> {
                            var sl = new io.flowkafka.internal.outbox.SyncSinkSlot(sink.id(), staged);
                            asyncSinks.add(new CompiledPipeline.AsyncSink(sink, c.id(), "", null, sl));
                            return sl;
                        });
                        routes.add(new ComputationPlan.SinkRoute(c.id() + ".write." + sink.id() + "." + stream,
                                Objects.toString(sink.parameters().get("topic")), sink, false, null, slot));
                        continue;
                    }
                    if (provider != null && provider.synchronous(sink) && !staged) {
                        // on the test driver a staged sink shows what it is handed in an outbox-named topic (below);
                        // a sink without a topic (ClickHouse) in a topic named after it
                        Object named = sink.parameters().get("topic");
                        String topic = named != null ? named.toString()
                                : topicPrefix + pipeline + ".sink." + c.id() + "." + sink.id();
                        routes.add(ComputationPlan.SinkRoute.sync(c.id() + ".sink." + sink.id() + "." + topic, topic, sink));
                        sinkTopics.putIfAbsent(topic, partitionsOf(c, spec));
                        streamTopics.computeIfAbsent(stream, s -> new ArrayList<>()).add(topic);
                        continue;
                    }
                    if (io.flowkafka.internal.outbox.Sinks.isAsync(sink.sinkClassName())
                            && io.flowkafka.spec.AtMostOnceStrategy.of(sink).enabled()) {
                        // at most once: an in-memory queue per sink, no outbox, nothing in the transaction
                        String name = c.id() + "/" + sink.id();
                        io.flowkafka.internal.outbox.AtMostOnceQueue queue = atMostOnceQueues.computeIfAbsent(name, k -> {
                            var dynamic = visitors.dynamic();
                            var q = new io.flowkafka.internal.outbox.AtMostOnceQueue(sink.id(),
                                    () -> dynamic.queueLimit(c.id(), sink.id()),
                                    io.micrometer.core.instrument.Counter.builder("flow.sink.dropped")
                                            .description("messages an at-most-once sink dropped (queue full)")
                                            .tags("pipeline", pipeline, "sink", sink.id()).register(visitors.meters()));
                            io.micrometer.core.instrument.Gauge.builder("flow.sink.queue_messages", q, qq -> qq.size())
                                    .description("messages in an at-most-once sink's queue")
                                    .tags("pipeline", pipeline, "sink", sink.id()).register(visitors.meters());
                            io.micrometer.core.instrument.Gauge.builder("flow.sink.queue_bytes", q, qq -> qq.bytes())
                                    .description("bytes in an at-most-once sink's queue")
                                    .tags("pipeline", pipeline, "sink", sink.id()).register(visitors.meters());
                            asyncSinks.add(new CompiledPipeline.AsyncSink(sink, c.id(), "", q, null));
                            return q;
                        });
                        routes.add(new ComputationPlan.SinkRoute(c.id() + ".queue." + sink.id() + "." + stream, "", sink,
                                false, queue, null));
                        continue;
                    }
                    if (io.flowkafka.internal.outbox.Sinks.isAsync(sink.sinkClassName())) {
                        String topic = outboxTopics.computeIfAbsent(c.id() + "/" + sink.id(), k -> {
                            String t = outboxTopic(topicPrefix, pipeline, sink.id());
                            return outboxPartitions.containsKey(t) ? outboxTopic(topicPrefix, pipeline, c.id() + "." + sink.id()) : t;
                        });
                        if (!outboxPartitions.containsKey(topic)) {
                            outboxPartitions.put(topic, c.desiredPartitionCount());
                            asyncSinks.add(new CompiledPipeline.AsyncSink(sink, c.id(), topic, null, null));
                        }
                        routes.add(new ComputationPlan.SinkRoute(c.id() + ".outbox." + sink.id() + "." + stream, topic, sink,
                                true, null, null));
                        streamTopics.computeIfAbsent(stream, s -> new ArrayList<>()).add(topic);
                        continue;
                    }
                    String topic = Objects.toString(sink.parameters().get("topic"));
                    routes.add(ComputationPlan.SinkRoute.sync(c.id() + ".sink." + sink.id() + "." + topic, topic, sink));
                    sinkTopics.putIfAbsent(topic, partitionsOf(c, spec));
                    streamTopics.computeIfAbsent(stream, s -> new ArrayList<>()).add(topic);
                }
                outputs.put(stream, routes);
            }
            Map<String, String> writers = new LinkedHashMap<>();
            for (String stream : c.inputStreamIds()) {
                writers.put(stream, spec.writerOf(stream).orElseThrow().id());
            }
            String controlTopic = null;
            if (inputs.isEmpty()) {
                // a computation without inputs (key-visitor only) reads a control topic, so Kafka Streams gives it
                // one task per partition and its transactions carry consumer offsets (zombie fencing)
                controlTopic = controlTopic(topicPrefix, pipeline, c.id());
                internalTopics.put(controlTopic, c.desiredPartitionCount());
            }
            List<ServiceLogScan.Table> serviceLogs = serviceLogs(spec, c, topicPrefix);
            ComputationPlan plan = new ComputationPlan(pipeline, c, inputs, outputs, outputSchemas, inputSchemas,
                    writers, counts, options.watermarks(), finite, c.id() + ".sink.status", options.timers(),
                    options.outputLimits(), options.deadLetters(), c.id() + ".sink.dlq", visitors, controlTopic,
                    alignment, sourceIdleness, external.plan(c.id()), serviceLogs);

            String processorName = c.id() + ".process";
            List<String> sourceNodes = new ArrayList<>();
            for (ComputationPlan.Input in : inputs.values()) {
                String node = c.id() + ".source." + in.topic();
                AutoOffsetReset reset = in.source() != null && "latest".equals(
                        String.valueOf(in.source().parameters().getOrDefault("starting_position", "earliest")))
                        ? AutoOffsetReset.latest() : AutoOffsetReset.earliest();
                topology.addSource(reset, node, new ByteArrayDeserializer(), new ByteArrayDeserializer(), in.topic());
                sourceNodes.add(node);
            }
            if (controlTopic != null) {
                String node = c.id() + ".source." + controlTopic;
                topology.addSource(AutoOffsetReset.earliest(), node, new ByteArrayDeserializer(),
                        new ByteArrayDeserializer(), controlTopic);
                sourceNodes.add(node);
            }
            boolean ownControl = controlTopic != null;
            topology.addProcessor(processorName, () -> new ComputationProcessor(plan), sourceNodes.toArray(String[]::new));
            if (ComputationPlan.hasStateStore(c, plan.external())) {
                topology.addStateStore(logged(KeyStates.storeBuilder(c.id(), persistentStores, storeCache), changelogs), processorName);
            }
            topology.addStateStore(logged(io.flowkafka.internal.watermarks.WatermarkTracker.storeBuilder(c.id(),
                    persistentStores), changelogs),
                    processorName);
            if (ownControl) {
                // the task writes a heartbeat to its own control partition and reads it back, so its transactions
                // carry consumed offsets and a zombie is fenced even though it consumes nothing else
                topology.addSink(c.id() + ".sink.control", controlTopic, new ByteArraySerializer(),
                        new ByteArraySerializer(), io.flowkafka.internal.partition.OwnPartitioner.INSTANCE, processorName);
            }
            topology.addSink(c.id() + ".sink.status", statusTopic, new ByteArraySerializer(), new ByteArraySerializer(),
                    processorName);
            if (!c.keyVisitorStreams().isEmpty()) {
                topology.addStateStore(logged(io.flowkafka.internal.visitor.KeyVisitor.storeBuilder(c.id(),
                        persistentStores), changelogs),
                        processorName);
            }
            List<io.flowkafka.internal.outbox.SyncSinkSlot> slots = new ArrayList<>();
            outputs.values().forEach(rs -> rs.forEach(r -> {
                if (r instanceof ComputationPlan.SinkRoute sr && sr.writer() != null && !slots.contains(sr.writer())) {
                    slots.add(sr.writer());
                }
            }));
            if (plan.hasEpochBarrier()) {
                topology.addStateStore(io.flowkafka.internal.outbox.EpochBarrierStore.builder(c.id(), slots), processorName);
            }
            if (slots.stream().anyMatch(io.flowkafka.internal.outbox.SyncSinkSlot::staged)) {
                topology.addStateStore(logged(io.flowkafka.internal.outbox.StagedEpochs.builder(c.id()), changelogs),
                        processorName);
            }
            if (!c.timers().isEmpty()) {
                for (var b : io.flowkafka.internal.timers.TimerStore.storeBuilders(c.id(), persistentStores,
                        ComputationPlan.writesInternalStreams(outputs), storeCache)) {
                    topology.addStateStore(logged(b, changelogs), processorName);
                }
            }
            boolean batching = c.kind() == io.flowkafka.spec.ComputationKind.SWIFT_MAP
                    && c.allowBatchingWithRelaxedGuarantees();
            if (batching) {
                topology.addStateStore(logged(io.flowkafka.internal.processor.BatchBuffer.storeBuilder(c.id()), changelogs),
                        processorName);
            }
            if (!serviceLogs.isEmpty()) {
                topology.addStateStore(logged(ServiceLogScan.storeBuilder(c.id(),
                        persistentStores), changelogs), processorName);
                for (var t : serviceLogs) {
                    if (tableStores.add(t.topic())) {
                        io.flowkafka.internal.external.TableStore.addTo(topology, t.topic(), persistentStores);
                    }
                }
            }
            boolean punctuated = c.sourceStreams().stream().anyMatch(io.flowkafka.internal.source.PunctuatedSources::is);
            if (punctuated) {
                topology.addStateStore(logged(io.flowkafka.internal.source.PunctuatedSources.storeBuilder(c.id(),
                        persistentStores), changelogs), processorName);
            }
            if (!c.timers().isEmpty() || !c.keyVisitorStreams().isEmpty() || batching || !serviceLogs.isEmpty()
                    || punctuated) {
                topology.addSink(c.id() + ".sink.dlq", deadLetterTopic(topicPrefix, pipeline), new ByteArraySerializer(),
                        new ByteArraySerializer(), processorName);
            }
            for (io.flowkafka.internal.external.ExternalPlan.Published p : plan.external().published().values()) {
                // a managed table: rows produced by the task, in the call's transaction, range-partitioned
                topology.addSink(p.sinkNode(), p.topic(), new ByteArraySerializer(), new ByteArraySerializer(),
                        io.flowkafka.internal.partition.RangePartitioner.INSTANCE, processorName);
            }
            for (List<ComputationPlan.Route> routes : outputs.values()) {
                for (ComputationPlan.Route r : routes) {
                    if (r instanceof ComputationPlan.InternalRoute) {
                        topology.addSink(r.sinkNode(), r.topic(), new ByteArraySerializer(), new ByteArraySerializer(),
                                io.flowkafka.internal.watermarks.MulticastRangePartitioner.INSTANCE, processorName);
                    } else if (((ComputationPlan.SinkRoute) r).queue() != null
                            || ((ComputationPlan.SinkRoute) r).writer() != null) {
                        continue; // at most once, or a synchronous external sink: no sink node
                    } else if (((ComputationPlan.SinkRoute) r).outbox()) {
                        topology.addSink(r.sinkNode(), r.topic(), new ByteArraySerializer(), new ByteArraySerializer(),
                                io.flowkafka.internal.outbox.OutboxPartitioner.INSTANCE, processorName);
                    } else {
                        topology.addSink(r.sinkNode(), r.topic(), new ByteArraySerializer(), new ByteArraySerializer(),
                                processorName);
                    }
                }
            }
        }
        return new CompiledPipeline(topology, internalTopics, sourceTopics, sinkTopics, streamTopics,
                deadLetterTopic(topicPrefix, pipeline), counts, sourceTopicsByComputation, finite, statusTopic,
                options.outputLimits(), outboxPartitions, asyncSinks, alignment, sourceIdleness,
                external.tableTopics(), external.versionedTopics(), external.readTopics().keySet().stream()
                        .filter(t -> !external.tableTopics().containsKey(t) && !external.versionedTopics().containsKey(t))
                        .toList());
    }

    /**
     * A store's builder as compiled: without a changelog when {@code changelogs} is off (FlowTestDriver,
     * which never restores a store and whose read methods cannot name a changelog topic: each change
     * would otherwise be produced, routed and committed by TopologyTestDriver, a third of its time).
     */
    private static <S extends org.apache.kafka.streams.processor.StateStore> org.apache.kafka.streams.state.StoreBuilder<S>
            logged(org.apache.kafka.streams.state.StoreBuilder<S> builder, boolean changelogs) {
        return changelogs ? builder : builder.withLoggingDisabled();
    }

    /**
     * The source topics of a KafkaSource: {@code topics} as a list or a comma-separated string; none for a
     * service-log source (it reads a table through its global store).
     */
    public static List<String> topicsOf(SourceSpec source) {
        if (ServiceLogSource.is(source) || io.flowkafka.internal.source.PunctuatedSources.is(source)) {
            return List.of();
        }
        return io.flowkafka.internal.source.KafkaSourceParameters.topics(source);
    }

    /** The service-log sources of computation {@code c}, resolved to their table topics and schemas. */
    private static List<ServiceLogScan.Table> serviceLogs(PipelineSpec spec,
            ComputationSpec c, String topicPrefix) {
        List<ServiceLogScan.Table> out = new ArrayList<>();
        for (SourceSpec s : c.sourceStreams()) {
            if (!ServiceLogSource.is(s)) {
                continue;
            }
            Schema streamSchema = schemaOf(spec, s.streamId());
            var manager = ServiceLogSource.manager(spec, s);
            String table = ServiceLogSource.table(s);
            if (manager == null && table.startsWith("/")) {
                throw new IllegalArgumentException("service-log source '" + s.streamId() + "' of computation '"
                        + c.id() + "' reads table '" + table + "', which no external state manager of pipeline '"
                        + spec.name() + "' declares; fix: name a manager of the pipeline (e.g. the one in "
                        + "external_state_managers of the computation writing the table), or give the table's topic");
            }
            ComputationSpec owner = ServiceLogSource.managerComputation(spec, s);
            Schema rowSchema = manager != null && manager.schema() != null ? manager.schema() : streamSchema;
            String topic = manager != null ? ExternalTopics.managerTopic(topicPrefix,
                    spec.name(), manager) : ServiceLogSource.table(s);
            out.add(new ServiceLogScan.Table(s, topic, rowSchema, streamSchema,
                    owner == null ? List.of() : owner.groupBySchema(), owner == null ? c.id() : owner.id()));
        }
        return out;
    }

    private static int partitionsOf(ComputationSpec c, PipelineSpec spec) {
        return c.desiredPartitionCount();
    }

    private static Schema schemaOf(PipelineSpec spec, String stream) {
        return Objects.requireNonNull(spec.streams().get(stream).schema(), () -> "stream '" + stream + "' has no schema");
    }

    /** For callers that check a kind. */
    static boolean isSource(ComputationSpec c) {
        return c.kind() == ComputationKind.SOURCE || c.kind() == ComputationKind.TRANSFORM_ORDERED_SOURCE;
    }
}
