package io.flowkafka.internal.outbox;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.AtMostOnceStrategy;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.spi.SyncSinkWriter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The external sinks' services of one runtime instance: the writers of synchronous sinks (installed in their slots
 * before processing starts), one outbox delivery service per async sink, and the deliveries of at-most-once sinks.
 * The rule it keeps: they are closed only once Kafka Streams closed, since stream threads write to them until then.
 *
 * <p>Threading: started and closed by the thread that starts and stops the runtime; each service runs its own thread.
 */
public final class SinkServices {
    private static final Logger LOG = LoggerFactory.getLogger(SinkServices.class);

    private final String pipeline;
    private final String applicationId;
    private final CompiledPipeline compiled;
    private final Properties userProps;
    private final Map<String, Object> client;
    private final Map<String, Object> outboxConsumer;
    private final StatusBoard status;
    private final MeterRegistry meters;
    private final Map<String, org.apache.avro.Schema> streamSchemas;
    private final List<OutboxService> outboxServices = new ArrayList<>();
    private final List<AtMostOnceDelivery> atMostOnceDeliveries = new ArrayList<>();
    private final List<SyncSinkWriter> syncWriters = new ArrayList<>();

    /**
     * @param userProps the user's properties, whose {@code flow.sink.<sink id>.*} keys configure each sink
     * @param client the pipeline cluster's client properties (bootstrap servers, security)
     * @param outboxConsumer the consumer properties of the outbox deliveries: the consumer settings the user gave
     *     Kafka Streams ({@code session.timeout.ms}, {@code heartbeat.interval.ms}, ...), so a killed instance's
     *     outbox partitions move as soon as its stream tasks do; {@code max.poll.interval.ms} at least its default
     *     ({@link #outboxConsumer})
     * @param streamSchemas the schemas of the pipeline's streams by id, given to each sink for its input streams
     */
    public SinkServices(String pipeline, String applicationId, CompiledPipeline compiled, Properties userProps,
            Map<String, Object> client, Map<String, Object> outboxConsumer, StatusBoard status, MeterRegistry meters,
            Map<String, org.apache.avro.Schema> streamSchemas) {
        this.pipeline = pipeline;
        this.applicationId = applicationId;
        this.compiled = compiled;
        this.userProps = userProps;
        this.client = client;
        this.outboxConsumer = outboxConsumer(outboxConsumer);
        this.status = status;
        this.meters = meters;
        this.streamSchemas = streamSchemas;
    }

    /** The default of {@code max.poll.interval.ms}, which the sinks' delivery time limits are sized for. */
    static final int MIN_MAX_POLL_INTERVAL_MS = 300_000;

    /**
     * The outbox consumers' properties: a lower {@code max.poll.interval.ms} given for the stream threads is raised to
     * its default. A sink's delivery call may take that long (the HTTP sink: one minute of sending plus its retry
     * budget); below it the consumer would leave its group mid-delivery, and another instance would send the same
     * batch at the same time.
     */
    static Map<String, Object> outboxConsumer(Map<String, Object> given) {
        Map<String, Object> out = new HashMap<>(given);
        Object interval = out.get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG);
        try {
            if (interval != null && Long.parseLong(interval.toString().trim()) < MIN_MAX_POLL_INTERVAL_MS) {
                out.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, MIN_MAX_POLL_INTERVAL_MS);
            }
        } catch (NumberFormatException e) {
            // not a number: Kafka's consumer config rejects it with its own message
        }
        return out;
    }

    /** Installs the writers of synchronous external sinks; before processing starts. */
    public void installSyncWriters() {
        for (var async : compiled.asyncSinks()) {
            if (async.writer() != null) {
                var writer = provider(async).createWriter(sinkContext(async));
                syncWriters.add(writer);
                async.writer().set(writer);
            }
        }
    }

    /**
     * Starts one delivery service per async sink (see {@link OutboxDeliverer}): an outbox service, or an at-most-once
     * delivery for a sink with {@code at_most_once_strategy}.
     *
     * @param admin purges delivered outbox records
     */
    public void startDeliveries(Admin admin, long purgeIntervalMs) {
        for (var async : compiled.asyncSinks()) {
            if (async.writer() != null) {
                continue; // synchronous: its writer was installed before processing started
            }
            var deliverer = provider(async).createDeliverer(sinkContext(async));
            int maxBatch = Integer.parseInt(String.valueOf(async.sink().parameters().getOrDefault("max_batch_records",
                    "500")));
            if (async.queue() != null) {
                var delivery = new AtMostOnceDelivery(pipeline, async.sink().id(), async.computation(), async.queue(),
                        deliverer, maxBatch, AtMostOnceStrategy.of(async.sink()).suspendDestructionDuration(), status);
                atMostOnceDeliveries.add(delivery);
                delivery.start();
                continue;
            }
            var service = new OutboxService(pipeline, async.sink().id(), async.computation(), async.outboxTopic(),
                    deliverer, outboxConsumer, applicationId + ".outbox." + async.sink().id(), maxBatch, admin, status, meters,
                    purgeIntervalMs);
            outboxServices.add(service);
            service.start();
        }
    }

    /**
     * Closes every service and writer; one that fails to close is logged, and the others are closed still. Every
     * delivery is told to stop before any is waited for, so the stops overlap instead of adding up.
     */
    public void close() {
        outboxServices.forEach(OutboxService::stopSoon);
        atMostOnceDeliveries.forEach(AtMostOnceDelivery::stopSoon);
        outboxServices.forEach(s -> closeQuietly("a sink's delivery service", s::close));
        outboxServices.clear();
        atMostOnceDeliveries.forEach(d -> closeQuietly("an at-most-once sink's delivery", d::close));
        atMostOnceDeliveries.clear();
        syncWriters.forEach(w -> closeQuietly("a sink writer", w::close));
        syncWriters.clear();
    }

    private void closeQuietly(String what, Runnable close) {
        try {
            close.run();
        } catch (RuntimeException e) {
            LOG.warn("pipeline '{}': closing {} failed: {}", pipeline, what, e.toString());
        }
    }

    private static SinkProvider provider(CompiledPipeline.AsyncSink async) {
        return Objects.requireNonNull(Sinks.provider(async.sink().sinkClassName()));
    }

    private SinkContext sinkContext(CompiledPipeline.AsyncSink async) {
        String prefix = FlowConfig.SINK_PREFIX + async.sink().id() + ".";
        Map<String, Object> sinkProps = new HashMap<>();
        userProps.forEach((k, v) -> {
            if (k.toString().startsWith(prefix)) {
                sinkProps.put(k.toString().substring(prefix.length()), v);
            }
        });
        Map<String, org.apache.avro.Schema> inputs = new HashMap<>();
        for (String stream : async.sink().inputStreamIds()) {
            var schema = streamSchemas.get(stream);
            if (schema != null) {
                inputs.put(stream, schema);
            }
        }
        return new SinkContext(pipeline, applicationId, async.computation(), async.sink(), client, sinkProps, meters,
                compiled.deadLetterTopic(), inputs);
    }
}
