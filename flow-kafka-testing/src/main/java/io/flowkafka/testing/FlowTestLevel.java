package io.flowkafka.testing;

import io.flowkafka.spec.PipelineSpec;
import java.util.Objects;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * Where a test runs a pipeline: the three levels of flow-kafka-testing, each opened as a
 * {@link PipelineUnderTest} that speaks the same vocabulary, so one test body runs on each level
 * where it fits (see {@link FlowTestLevels}).
 *
 * <p>Limitations of the shared vocabulary:
 * <ol>
 *   <li>{@link #HARNESS} runs one computation: a test that pipes into or reads streams of other
 *       computations does not fit it;</li>
 *   <li>the harness models event-time timers from the input watermarks as the runtime does
 *       ({@code streams}, {@code streams_with_delays}); a {@code system_time} timer stream's
 *       watermark is the harness clock at the last watermark step, and {@code real_time} timers
 *       fire only through {@link ComputationHarness} itself;</li>
 *   <li>on {@link #BROKER}, the order of payloads across partitions is not defined, and
 *       {@link PipelineUnderTest#readPayloads} (no wait) sees only what was committed.</li>
 * </ol>
 */
public enum FlowTestLevel {
    /**
     * {@link ComputationHarness}: one computation's process function in memory, call by call;
     * milliseconds. Needs the computation under test.
     */
    HARNESS,
    /** {@link FlowTestDriver}: the whole pipeline on Kafka Streams' TopologyTestDriver; milliseconds. */
    DRIVER,
    /**
     * The whole pipeline on a real {@link io.flowkafka.runtime.FlowRuntime} against the JVM-wide
     * {@link EmbeddedKafkaCluster#shared() in-JVM broker}, exactly-once; seconds. Run it in
     * {@code *IT} classes.
     *
     * <p>Every computation runs, Source computations included, so the writer of a stream the test
     * pipes into may also send its own control records. That is what the runtime's rule is made
     * for: a reader keeps, per producer (writer task), the largest watermarks it heard and the OR
     * of completion, so the watermarks a test sends as the writer stand unless the writer itself
     * is ahead (a Source computation whose own source topic the test also fills). A test that
     * wants its explicit watermarks to be the only ones should therefore pipe only into internal
     * streams and leave the source topics empty, which is what the level does: it creates missing
     * source topics empty, with {@link #BROKER_SOURCE_TOPIC_PARTITIONS} partitions. Running
     * only the computations downstream of the piped streams was the other choice; it would need a
     * second way of deploying a pipeline that the runtime does not have, and would test something
     * else than what runs in production. One consequence: a <em>finite</em> Source computation
     * whose source topic is empty completes at once on the broker (on the driver only at
     * {@link FlowTestDriver#completeSource}), and completes the streams it writes; give specs
     * for this level non-finite sources, or fill them.
     *
     * <p>Topic names: internal topics and the {@code application.id} get a prefix unique in this
     * JVM ({@code flow.topic.prefix}, {@code flow.application.id.prefix}) unless the properties set
     * them; the source and sink topics the spec names must be unique per test: build the spec with
     * {@link TestNames}.
     */
    BROKER;

    /**
     * Property: how long {@link PipelineUnderTest#awaitPayloads} and
     * {@link PipelineUnderTest#awaitCompleted} wait, in milliseconds: real time on the broker, wall
     * clock of the driver on the driver. Not passed on to the pipeline.
     */
    public static final String AWAIT_BOUND_MS_CONFIG = "flow.testing.await.bound.ms";
    /** A plain-text description of {@value #AWAIT_BOUND_MS_CONFIG}. */
    public static final String AWAIT_BOUND_MS_DOC = "How long, in milliseconds, awaitPayloads and awaitCompleted "
            + "wait: real time on the broker level, driver wall-clock time on the driver level.";
    /** The default of {@value #AWAIT_BOUND_MS_CONFIG}: one minute. */
    public static final long AWAIT_BOUND_MS_DEFAULT = 60_000L;

    /** The partition count of the source topics that the {@link #BROKER} level creates when the spec's do not exist. */
    public static final int BROKER_SOURCE_TOPIC_PARTITIONS = 2;

    /**
     * Opens the pipeline on this level with default properties, with {@code computationId} as the
     * computation under test (the one the harness runs; on the other levels the whole pipeline
     * runs, and the id serves {@link PipelineUnderTest#advanceWatermark(long)}).
     *
     * @param spec the pipeline spec
     * @param computationId the computation under test
     * @return the open pipeline; close it after the test
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec
     * @throws IllegalArgumentException if the spec has no such computation
     */
    public PipelineUnderTest open(PipelineSpec spec, String computationId) {
        return open(spec, computationId, new Properties());
    }

    /**
     * Opens the whole pipeline on this level, without a computation under test.
     *
     * @param spec the pipeline spec
     * @return the open pipeline; close it after the test
     * @throws UnsupportedOperationException on {@link #HARNESS}, which runs one computation
     */
    public PipelineUnderTest open(PipelineSpec spec) {
        if (this == HARNESS) {
            throw new UnsupportedOperationException("the HARNESS level runs one computation: open it with "
                    + "open(spec, computationId), or leave HARNESS out of @FlowTestLevels");
        }
        return open(spec, null, new Properties());
    }

    /**
     * Opens the pipeline on this level with properties: those of {@link FlowTestDriver#create}
     * (passed on to the runtime on the broker level, over the level's defaults), plus
     * {@value FlowTestDriver#PIPE_WATERMARKS_CONFIG} and {@value #AWAIT_BOUND_MS_CONFIG}, which
     * every level honours. {@code props} is copied.
     *
     * @param spec the pipeline spec
     * @param computationId the computation under test, or null (not on {@link #HARNESS})
     * @param props the properties; copied, not kept
     * @return the open pipeline; close it after the test
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec
     * @throws IllegalArgumentException if the spec has no such computation, or a testing property
     *     has a bad value
     * @throws io.flowkafka.api.FlowException if the broker pipeline cannot start
     */
    public PipelineUnderTest open(PipelineSpec spec, @Nullable String computationId, Properties props) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(props, "props");
        if (computationId != null && !spec.computations().containsKey(computationId)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        Properties p = new Properties();
        p.putAll(props);
        long bound = awaitBoundMs(p.remove(AWAIT_BOUND_MS_CONFIG));
        return switch (this) {
            case HARNESS -> {
                if (computationId == null) {
                    throw new IllegalArgumentException("the HARNESS level runs one computation: name it");
                }
                yield new HarnessPipeline(spec, computationId, p);
            }
            case DRIVER -> new DriverPipeline(spec, computationId, p, bound);
            case BROKER -> new BrokerPipeline(spec, computationId, p, bound);
        };
    }

    private static long awaitBoundMs(@Nullable Object value) {
        if (value == null) {
            return AWAIT_BOUND_MS_DEFAULT;
        }
        try {
            long v = Long.parseLong(value.toString().trim());
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(AWAIT_BOUND_MS_CONFIG + " must be a positive number of milliseconds but was '"
                + value + "'");
    }
}
