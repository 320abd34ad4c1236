package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a finite pipeline complete: its finite sources' partitions done once the committed offsets reach their
 * bounds, and the tasks' completion reports read from the status topic by its own consumer. The rule it keeps: the
 * pipeline completes only when every task of every computation has reported.
 *
 * <p>Threading: {@link #check} runs on the runtime's slow maintenance thread; {@link #close} once that thread ended.
 */
public final class CompletionWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CompletionWatch.class);

    private final PipelineSpec spec;
    private final CompiledPipeline compiled;
    private final String applicationId;
    private final Map<String, Object> consumerProps;
    private final BooleanSupplier complete;
    private final Set<String> completedTasks = new HashSet<>();
    private @Nullable KafkaConsumer<String, String> statusConsumer;

    /**
     * @param client consumer settings of the pipeline's cluster (bootstrap servers, security), without a group
     * @param complete moves the runtime to completed; returns whether it did (only a running one does)
     */
    public CompletionWatch(PipelineSpec spec, CompiledPipeline compiled, String applicationId,
            Map<String, Object> client, BooleanSupplier complete) {
        this.spec = spec;
        this.compiled = compiled;
        this.applicationId = applicationId;
        this.consumerProps = new HashMap<>(client);
        this.complete = complete;
    }

    /** Marks finite sources done by committed offsets and reads completion reports; a failure is retried later. */
    public void check(Admin admin) {
        try {
            if (!compiled.finiteSources().bounds().isEmpty()) {
                var committed = admin.listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata()
                        .get(30, TimeUnit.SECONDS);
                compiled.finiteSources().bounds().forEach((tp, bound) -> {
                    var om = committed.get(tp);
                    if (bound == 0L || (om != null && om.offset() >= bound)) {
                        compiled.finiteSources().markDone(tp);
                    }
                });
            }
            for (var r : statusConsumer().poll(Duration.ofMillis(100))) {
                if ("completed".equals(r.value())) {
                    completedTasks.add(r.key());
                }
            }
            int expected = 0;
            for (ComputationSpec c : spec.computations().values()) {
                expected += compiled.partitionCounts().of(c.id());
            }
            if (completedTasks.size() >= expected && complete.getAsBoolean()) {
                LOG.info("pipeline '{}' completed: all {} tasks reported completion", spec.name(), expected);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("pipeline '{}': completion check failed, will retry: {}", spec.name(), e.toString());
        }
    }

    private KafkaConsumer<String, String> statusConsumer() {
        KafkaConsumer<String, String> c = statusConsumer;
        if (c == null) {
            Map<String, Object> cp = new HashMap<>(consumerProps);
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c = new KafkaConsumer<>(cp);
            statusConsumer = c;
            var tp = new TopicPartition(compiled.statusTopic(), 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
        }
        return c;
    }

    /** Closes the status-topic consumer, if any. Idempotent. */
    @Override
    public void close() {
        if (statusConsumer != null) {
            statusConsumer.close(Duration.ofSeconds(2));
            statusConsumer = null;
        }
    }
}
