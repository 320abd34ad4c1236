package io.flowkafka.internal.processor;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.dlq.RecordSizeLimit;
import io.flowkafka.internal.dlq.RejectedOutputs;
import io.flowkafka.internal.dlq.RejectedRecordException;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.outbox.AtMostOnceEpochs;
import io.flowkafka.internal.outbox.OutboxService;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.serde.PluggableSerdes;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;

/**
 * Routes a computation task's outputs: encodes each output message once per route of its stream (an internal
 * stream's topic per distinct consumer key, a Kafka sink, an async sink's outbox, a synchronous sink, an
 * at-most-once sink's queue), checks each record against what the producer sends and what brokers rejected before
 * (such a call fails and its input goes to the dead-letter topic), and holds the writes that must wait for the
 * call to succeed: synchronous sink writes here, at-most-once messages with the epoch ({@link AtMostOnceEpochs}).
 *
 * <p>One per task attempt. Not thread-safe.
 */
final class OutputRouter {
    private final String computation;
    private final int partition;
    private final Map<String, Object> deployment;
    private final RecordSizeLimit limit;
    private final @Nullable RejectedOutputs rejected;
    private final AtMostOnceEpochs atMostOnce;
    private final long computationTag;
    private final Map<String, OutputBinding> outputs = new HashMap<>();
    private @Nullable String lastStreamId;
    private @Nullable OutputBinding lastBinding;
    /** Writes of the current call to synchronous external sinks, run once the call succeeded. */
    private final List<Runnable> sinkWrites = new ArrayList<>(0);

    /**
     * @param plan the computation's plan (its output streams, their schemas and routes)
     * @param partition the task's partition
     * @param deployment the deployment's properties (the serdes' {@code flow.serde.*})
     * @param limit the largest record the producer sends
     * @param rejected records brokers rejected for good, or null outside a FlowRuntime
     * @param atMostOnce where at-most-once messages wait for their epoch
     */
    OutputRouter(ComputationPlan plan, int partition, Map<String, Object> deployment, RecordSizeLimit limit,
            @Nullable RejectedOutputs rejected, AtMostOnceEpochs atMostOnce) {
        this.computation = plan.spec().id();
        this.partition = partition;
        this.deployment = deployment;
        this.limit = limit;
        this.rejected = rejected;
        this.atMostOnce = atMostOnce;
        this.computationTag = MessageIds.computationTag(computation);
        for (Map.Entry<String, List<ComputationPlan.Route>> e : plan.outputs().entrySet()) {
            outputs.put(e.getKey(), new OutputBinding(e.getKey(), plan.outputSchemas().get(e.getKey()), e.getValue()));
        }
    }

    /** A call begins: leftovers of a call whose forward threw belong to no call. */
    void beginCall() {
        sinkWrites.clear();
    }

    /** The call failed: its held writes are dropped. */
    void callFailed() {
        sinkWrites.clear();
    }

    /** The call succeeded and its outputs were forwarded: its synchronous sink writes go out. */
    void callSucceeded() {
        if (!sinkWrites.isEmpty()) {
            sinkWrites.forEach(Runnable::run);
            sinkWrites.clear();
        }
    }

    /** Closes the sinks' value serdes. */
    void close() {
        outputs.values().forEach(o -> o.sinks.forEach(sb -> {
            if (sb != null) {
                sb.close();
            }
        }));
    }

    /**
     * Encodes the outputs of a call on one input for every route of their streams: an output's id derives from its
     * parents (the input by default) and its position in the call, so a replay writes the same ids.
     *
     * @param nodes receives, per record returned, the sink node it is forwarded to
     */
    List<Record<byte[], byte[]>> encode(List<CallContext.Output> outs, MessageId inputId, long inputEts, long nowNanos,
            List<String> nodes) {
        if (outs.isEmpty()) {
            return List.of();
        }
        List<Record<byte[], byte[]>> records = new ArrayList<>(outs.size());
        for (int position = 0; position < outs.size(); position++) {
            CallContext.Output o = outs.get(position);
            List<MessageId> parents = o.parentsOrInput(inputId);
            MessageId id = MessageIds.output(parents, inputId, computationTag, position);
            long ets = o.eventTimestampOr(inputEts);
            binding(o.message().streamId).encode(o.message().payload, id, ets, nowNanos, parents, records, nodes);
        }
        return records;
    }

    /** The binding of an output stream: the last one again when the id is the same instance (no hashing). */
    private OutputBinding binding(String streamId) {
        if (streamId != lastStreamId) {
            lastBinding = outputs.get(streamId);
            lastStreamId = streamId;
        }
        return lastBinding;
    }

    /**
     * Encodes the outputs of a batched call. An output's parents are the whole batch unless it
     * named a subset; its id derives from that set and its position among the call's outputs with
     * the same set ({@link MessageIds#deriveFromSet}), so it does not depend on the order of the
     * batch or on outputs for other sets; its default event timestamp is its parents' largest.
     */
    List<Record<byte[], byte[]>> encodeBatch(CallContext call, long nowNanos, List<String> nodes) {
        List<CallContext.Output> outs = call.outputs;
        if (outs.isEmpty()) {
            return List.of();
        }
        List<MessageId> all = call.batchIds();
        Map<List<MessageId>, int[]> positions = new HashMap<>();
        List<Record<byte[], byte[]>> records = new ArrayList<>(outs.size());
        for (CallContext.Output o : outs) {
            List<MessageId> parents = o.parents() == null ? all : o.parents();
            int position = positions.computeIfAbsent(parents, k -> new int[1])[0]++;
            MessageId id = MessageIds.deriveFromSet(parents, computationTag, position);
            long ets = o.message().eventTimestamp != Long.MIN_VALUE ? o.message().eventTimestamp
                    : call.batchEventTimestamp(parents);
            binding(o.message().streamId).encode(o.message().payload, id, ets, nowNanos, parents, records, nodes);
        }
        return records;
    }

    /**
     * Fails the call if {@code r}, an output Kafka Streams' producer sends to {@code target}, is larger than the
     * producer sends or was rejected by its topic before: its input then goes to the dead-letter topic.
     */
    private void checkOutput(String target, Record<byte[], byte[]> r) {
        if (!limit.fits(r.key(), r.value(), r.headers())) {
            throw new RejectedRecordException(limit.tooLarge("this output to " + target,
                    r.key(), r.value(), r.headers()));
        }
        checkNotRejected(target, r);
    }

    /**
     * Fails the call if {@code r} was rejected by {@code target} before (see
     * {@link RejectedOutputs}): its input then goes to the dead-letter topic. One volatile
     * read per output while no output was ever rejected.
     */
    private void checkNotRejected(String target, Record<byte[], byte[]> r) {
        var rejected = this.rejected;
        if (rejected != null) {
            rejected.check(target, r.key(), r.value(), r.timestamp());
        }
    }


    /** Encodes one output stream's messages for each of its routes. */
    private final class OutputBinding {
        final AvroCodec codec;
        final List<ComputationPlan.Route> routes;
        final List<KeyCodec> keyCodecs = new ArrayList<>();
        final List<KeyCodec.Extractor> extractors = new ArrayList<>();
        final List<SinkBinding> sinks = new ArrayList<>();
        /** Per route, what rejects its records: {@code topic <name>}, or {@code sink '<id>'} for a synchronous sink. */
        final List<String> targets = new ArrayList<>();

        OutputBinding(String streamId, Schema schema, List<ComputationPlan.Route> routes) {
            this.codec = new AvroCodec(schema);
            this.routes = routes;
            for (ComputationPlan.Route r : routes) {
                targets.add(r instanceof ComputationPlan.SinkRoute sr && sr.writer() != null
                        ? "sink '" + sr.sink().id() + "'" : "topic " + r.topic());
                if (r instanceof ComputationPlan.InternalRoute ir) {
                    KeyCodec kc = KeyCodec.of(ir.consumerGroupBy(), ir.consumerId());
                    keyCodecs.add(kc);
                    extractors.add(kc.extractor(ir.consumerGroupBy(), schema));
                    sinks.add(null);
                } else {
                    keyCodecs.add(null);
                    extractors.add(null);
                    sinks.add(SinkBinding.of(((ComputationPlan.SinkRoute) r).sink(), deployment, computation));
                }
            }
        }

        void encode(GenericRecord payload, MessageId id, long ets, long sts, List<MessageId> parents,
                List<Record<byte[], byte[]>> out, List<String> nodes) {
            byte[] value = null;
            byte[] meta = null;
            for (int i = 0; i < routes.size(); i++) {
                ComputationPlan.Route route = routes.get(i);
                if (route instanceof ComputationPlan.InternalRoute) {
                    if (value == null) { // payload and metadata are the same for every internal route
                        value = codec.encode(payload);
                        meta = FlowHeaders.encode(id, ets, sts, parents);
                    }
                    byte[] key = keyCodecs.get(i).encode(extractors.get(i).key(payload));
                    Headers headers = new RecordHeaders();
                    headers.add(FlowHeaders.META, meta);
                    Record<byte[], byte[]> r = new Record<>(key, value, sts / 1_000_000L, headers);
                    checkOutput(targets.get(i), r);
                    out.add(r);
                    nodes.add(route.sinkNode());
                    continue;
                }
                ComputationPlan.SinkRoute sinkRoute = (ComputationPlan.SinkRoute) route;
                if (sinkRoute.writer() != null) {
                    // a synchronous external sink: sent once the call succeeded, acknowledged before the epoch commits
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    checkNotRejected(targets.get(i), r);
                    var writer = sinkRoute.writer();
                    OutboxRecord record = new OutboxRecord(-1, id, r.key(), r.value(), r.headers(), r.timestamp(), sts);
                    writer.check(record); // a record the sink can never write fails the call: to the dead letters
                    sinkWrites.add(() -> writer.write(partition, record));
                    continue;
                } else if (sinkRoute.queue() != null) {
                    // at most once: into the sink's in-memory queue once the call's epoch committed (dropped when full)
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    var queue = sinkRoute.queue();
                                        atMostOnce.offer(() -> queue.offer(partition, id, r.key(), r.value(), r.headers(), r.timestamp()));
                    continue;
                } else if (sinkRoute.outbox()) {
                    // an async sink: the record the sink will write, plus its message metadata and the writing task's
                    // partition, into the outbox inside this transaction
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    if (meta == null) {
                        meta = FlowHeaders.encode(id, ets, sts, parents);
                    }
                    Headers headers = new RecordHeaders();
                    for (org.apache.kafka.common.header.Header h : r.headers()) {
                        headers.add(h);
                    }
                    headers.add(FlowHeaders.META, meta);
                    headers.add(OutboxService.PARTITION_HEADER, outboxPartitionHeader());
                    Record<byte[], byte[]> outbox = new Record<>(r.key(), r.value(), r.timestamp(), headers);
                    checkOutput(targets.get(i), outbox);
                    out.add(outbox);
                } else {
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    checkOutput(targets.get(i), r);
                    out.add(r);
                }
                nodes.add(route.sinkNode());
            }
        }

        private Record<byte[], byte[]> sinkRecord(SinkBinding sink, GenericRecord payload, MessageId id, long ets, long sts) {
            Headers headers = null;
            if (sink.idHeader != null) {
                headers = new RecordHeaders();
                headers.add(sink.idHeader, id.toString().getBytes(StandardCharsets.UTF_8));
            }
            byte[] value;
            if (sink.valueSerde != null) {
                // a pluggable serde may add headers (e.g. a schema id): give it the record's headers
                if (headers == null) {
                    headers = new RecordHeaders();
                }
                value = sink.valueSerde.serializer().serialize(sink.topic, headers, payload);
            } else if (sink.payloadColumn != null) {
                value = bytesOf(payload.get(sink.payloadColumn), "payload_column", sink.payloadColumn);
            } else if (sink.avro) {
                value = codec.encode(payload);
            } else {
                value = JsonRecords.toJson(payload);
            }
            byte[] key = sink.keyColumn == null ? null : bytesOf(payload.get(sink.keyColumn), "key_column", sink.keyColumn);
            long ts = (sink.systemTime ? sts : ets) / 1_000_000L;
            if (ts < 0) { // Kafka Streams' Record would refuse it as "Malformed Record"
                throw new IllegalArgumentException(sink.where + ": the message's " + (sink.systemTime ? "system" : "event")
                        + " time " + Instant.ofEpochSecond(0, sink.systemTime ? sts : ets) + " is before 1970, which a "
                        + "Kafka record's timestamp cannot be; write it with timestamp: system on the sink, or give it an "
                        + "event time from 1970 on");
            }
            return headers == null ? new Record<>(key, value, ts) : new Record<>(key, value, ts, headers);
        }

        private static byte @Nullable [] bytesOf(@Nullable Object v, String param, String column) {
            if (v == null) {
                return null;
            }
            if (v instanceof java.nio.ByteBuffer b) {
                byte[] a = new byte[b.remaining()];
                b.duplicate().get(a);
                return a;
            }
            if (v instanceof CharSequence || v instanceof Number || v instanceof Boolean) {
                return v.toString().getBytes(StandardCharsets.UTF_8);
            }
            throw new IllegalArgumentException(param + " '" + column + "' must be a string, number or bytes column");
        }
    }

    private byte @Nullable [] outboxPartitionHeader;

    private byte[] outboxPartitionHeader() {
        byte[] h = outboxPartitionHeader;
        if (h == null) {
            h = OutboxService.partitionHeader(partition);
            outboxPartitionHeader = h;
        }
        return h;
    }

    /**
     * A Kafka sink's parameters, read once, and its value_serde (configured from
     * {@code serde_config} over the deployment's {@code flow.serde.*}), if any; {@code topic} is the
     * target topic the serde is told about (for TKafkaSink too, whose records go through the outbox).
     */
    private record SinkBinding(@Nullable String payloadColumn, boolean avro, @Nullable String keyColumn,
            @Nullable String idHeader, boolean systemTime, String topic,
            @Nullable Serde<Object> valueSerde, String where) {
        static SinkBinding of(SinkSpec sink, Map<String, Object> deployment, String computation) {
            Map<String, Object> p = sink.parameters();
            Object serdeClass = p.get("value_serde");
            return new SinkBinding(p.containsKey("payload_column") ? p.get("payload_column").toString() : null,
                    "avro".equals(String.valueOf(p.getOrDefault("format", "json"))),
                    p.containsKey("key_column") ? p.get("key_column").toString() : null,
                    p.containsKey("message_id_header") ? p.get("message_id_header").toString() : null,
                    "system".equals(String.valueOf(p.getOrDefault("timestamp", "event"))),
                    String.valueOf(p.get("topic")),
                    serdeClass == null ? null : PluggableSerdes.create(serdeClass.toString(),
                            PluggableSerdes.configs(p.get("serde_config"), deployment), false,
                            "computation '" + computation + "', sink '" + sink.id() + "'"),
                    "computation '" + computation + "', sink '" + sink.id() + "'");
        }

        void close() {
            if (valueSerde != null) {
                valueSerde.close();
            }
        }
    }
}
