package io.flowkafka.testing;

import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.PipelineCodecs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.streams.test.TestRecord;
import org.jspecify.annotations.Nullable;

/**
 * {@link FlowTestLevel#DRIVER}: the pipeline on {@link FlowTestDriver}. Waiting advances the
 * driver's wall clock by {@code flow.watermark.interval.ms} per step, which is how watermarks and
 * completion travel past the first computation on the driver. Single-threaded, like the driver.
 */
final class DriverPipeline implements PipelineUnderTest {
    private final PipelineSpec spec;
    private final @Nullable String computationId;
    private final FlowTestDriver driver;
    private final PipelineCodecs codecs;
    private final Duration step;
    private final long maxSteps;
    private final Map<String, Long> explicit = new java.util.HashMap<>();
    private final Set<String> completed = new java.util.HashSet<>();

    DriverPipeline(PipelineSpec spec, @Nullable String computationId, Properties props, long awaitBoundMs) {
        this.spec = spec;
        this.computationId = computationId;
        this.driver = FlowTestDriver.create(spec, props);
        Properties codecProps = new Properties();
        props.forEach((k, v) -> {
            if (k.toString().startsWith("flow.") && !k.toString().startsWith("flow.testing.")) {
                codecProps.put(k, v);
            }
        });
        this.codecs = PipelineCodecs.of(spec, codecProps);
        this.step = Duration.ofMillis(new FlowConfig(codecProps).getLong(FlowConfig.WATERMARK_INTERVAL_MS_CONFIG));
        this.maxSteps = Math.max(1, awaitBoundMs / step.toMillis());
    }

    /** Whether {@value FlowTestDriver#PIPE_WATERMARKS_CONFIG} asks to follow the data (validated). */
    static boolean follows(Properties props) {
        Object v = props.get(FlowTestDriver.PIPE_WATERMARKS_CONFIG);
        String s = v == null ? FlowTestDriver.PIPE_WATERMARKS_DEFAULT : v.toString().trim();
        if (!s.equals(FlowTestDriver.PIPE_WATERMARKS_EXPLICIT) && !s.equals(FlowTestDriver.PIPE_WATERMARKS_FOLLOW)) {
            throw new IllegalArgumentException(FlowTestDriver.PIPE_WATERMARKS_CONFIG + " must be '"
                    + FlowTestDriver.PIPE_WATERMARKS_EXPLICIT + "' or '" + FlowTestDriver.PIPE_WATERMARKS_FOLLOW
                    + "' but was '" + v + "'");
        }
        return s.equals(FlowTestDriver.PIPE_WATERMARKS_FOLLOW);
    }

    /** The driver this level runs, for what the shared vocabulary does not cover. */
    FlowTestDriver driver() {
        return driver;
    }

    @Override
    public FlowTestLevel level() {
        return FlowTestLevel.DRIVER;
    }

    @Override
    public PipelineSpec spec() {
        return spec;
    }

    @Override
    public @Nullable String computationId() {
        return computationId;
    }

    @Override
    public void pipe(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        driver.pipe(streamId, fields, eventTimestampNanos);
    }

    @Override
    public void advanceWatermark(String streamId, long eventWatermarkNanos) {
        driver.advanceWatermark(streamId, eventWatermarkNanos);
        explicit.put(streamId, eventWatermarkNanos);
    }

    @Override
    public void advanceWatermark(long eventWatermarkNanos) {
        for (String in : underTest("advanceWatermark(eventWatermarkNanos)").inputStreamIds()) {
            if (!completed.contains(in) && eventWatermarkNanos > explicit.getOrDefault(in, Long.MIN_VALUE)) {
                advanceWatermark(in, eventWatermarkNanos);
            }
        }
    }

    @Override
    public void completeStream(String streamId) {
        driver.completeStream(streamId);
        completed.add(streamId);
    }

    @Override
    public List<GenericRecord> readPayloads(String streamId) {
        List<String> topics = codecs.topicsOf(streamId);
        if (topics.stream().anyMatch(codecs.internalTopics()::containsKey)) {
            return driver.readPayloads(streamId);
        }
        codecs.schemaOf(streamId);
        if (topics.isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' is written to no topic (a source stream): nothing to read");
        }
        String topic = topics.get(0);
        List<GenericRecord> out = new ArrayList<>();
        for (TestRecord<byte[], byte[]> r : driver.readTopic(topic)) {
            out.add(codecs.decodeSinkValue(streamId, topic, r.value()));
        }
        return out;
    }

    @Override
    public List<GenericRecord> awaitPayloads(String streamId, int count) {
        List<GenericRecord> out = new ArrayList<>(readPayloads(streamId));
        awaitSteps(() -> {
            if (out.size() < count) {
                out.addAll(readPayloads(streamId));
            }
            return out.size() >= count;
        }, count + " payload(s) of stream '" + streamId + "'", () -> "got " + out.size() + ": " + out);
        return List.copyOf(out);
    }

    @Override
    public Optional<GenericRecord> stateForPayload(String computationId, String stateName, String inputStreamId,
            Map<String, ?> payloadFields) {
        return driver.stateForPayload(computationId, stateName, inputStreamId, payloadFields);
    }

    @Override
    public Optional<GenericRecord> externalRowForPayload(String computationId, String name, String inputStreamId,
            Map<String, ?> payloadFields) {
        return driver.externalTable(computationId, name).getForPayload(inputStreamId, payloadFields);
    }

    @Override
    public Set<String> completedComputations() {
        return driver.completedComputations();
    }

    @Override
    public void awaitCompleted(String computationId) {
        if (!spec.computations().containsKey(computationId)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        awaitSteps(() -> driver.completedComputations().contains(computationId),
                "computation '" + computationId + "' completed", () -> "completed: " + driver.completedComputations());
    }

    /** Checks the condition, then advances the wall clock one watermark step at a time until it holds. */
    private void awaitSteps(BooleanSupplier condition, String what, java.util.function.Supplier<String> state) {
        for (long i = 0; !condition.getAsBoolean(); i++) {
            if (i >= maxSteps) {
                throw new AssertionError("not true within " + maxSteps * step.toMillis() + "ms of driver wall-clock "
                        + "time (" + maxSteps + " watermark steps): " + what + "; " + state.get());
            }
            driver.advanceWallClockTime(step);
        }
    }

    private ComputationSpec underTest(String method) {
        if (computationId == null) {
            throw new IllegalStateException(method + " advances the inputs of the computation under test, but none "
                    + "was named: open the pipeline with open(spec, computationId)");
        }
        return spec.computations().get(computationId);
    }

    @Override
    public void close() {
        driver.close();
    }

    @Override
    public String toString() {
        return "DRIVER[" + spec.name() + "]";
    }
}
