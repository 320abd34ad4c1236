package io.flowkafka.testing;

import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * A pipeline (or one computation of it) running on one {@link FlowTestLevel test level}, driven
 * through the vocabulary the three levels share, so that one test body runs on the unit harness,
 * on {@link FlowTestDriver} and on a real broker. Open one with
 * {@link FlowTestLevel#open(PipelineSpec, String)}; run a test method on several levels with
 * {@link FlowTestLevels}.
 *
 * <p>Example, the wait-click join of the examples module, compiled and run on all three levels as
 * {@code io.flowkafka.examples.waitclick.WaitClickJoinAllLevels} (surefire runs its harness and
 * driver levels as {@code WaitClickJoinAllLevelsTest}, failsafe its broker level as
 * {@code WaitClickJoinAllLevelsIT}):
 *
 * <pre>{@code
 * @FlowTestLevels
 * void shouldJoinClicksWithinThirtyMinutesAndTimeOutTheRest(FlowTestLevel level, TestNames names) {
 *     PipelineSpec spec = WaitClickJoin.spec(names.name("wcj"), names.topic("impressions"), names.topic("clicks"),
 *             names.topic("results"), 2, false);
 *     try (PipelineUnderTest join = level.open(spec, "join")) {
 *         join.pipe("impressions", impression("i1", 0), 0L);
 *         join.pipe("impressions", impression("i2", 0), 0L);
 *         join.pipe("clicks", click("i1", 10 * MIN), 10 * MIN * MS);
 *         ...
 *         assertThat(byImpression(join.awaitPayloads("results", 2)))
 *                 .containsExactly(Map.entry("i1", "joined"), Map.entry("i3", "joined"));
 *
 *         join.advanceWatermark(30 * MIN * MS + 1);                          // both inputs, past i1's and i2's wait
 *         assertThat(byImpression(join.awaitPayloads("results", 1))).containsExactly(Map.entry("i2", "no_click"));
 *         assertThat(join.stateForPayload("join", "join", "impressions", impression("i2", 0))).isEmpty();
 *         ...
 *         join.completeStream("impressions");
 *         join.completeStream("clicks");                                     // +infinity: every wait is over
 *         join.awaitCompleted("join");
 *     }
 * }
 * }</pre>
 *
 * <p>The shared contract:
 * <ul>
 *   <li><b>Input</b> goes into internal streams, as their writer would send it
 *       ({@link #pipe}); the event watermark of such a stream moves only by
 *       {@link #advanceWatermark(String, long)} and {@link #completeStream} (or, with
 *       {@value FlowTestDriver#PIPE_WATERMARKS_CONFIG}{@code =follow} in the properties, with the
 *       data), never back: a value below one already set is rejected with
 *       {@link IllegalArgumentException}. A timer fires when its watermark exceeds its trigger.</li>
 *   <li><b>Output</b> is read as decoded payloads, consuming ({@link #readPayloads}); a stream
 *       written only to a {@code KafkaSink} is read from its sink topic and decoded with the
 *       sink's format. Reads that expect something use {@link #awaitPayloads}: it returns at once
 *       on the harness, advances the driver's wall clock in watermark steps, and polls the broker,
 *       each up to {@link FlowTestLevel#AWAIT_BOUND_MS_CONFIG}. Across partitions (broker) the
 *       order of payloads is not defined: compare them as sets or maps.</li>
 *   <li><b>State</b> is the committed value ({@link #stateForPayload}).</li>
 * </ul>
 *
 * <p>Not thread-safe: use an instance from one thread. The caller closes it (which stops the
 * pipeline on the broker and deletes its local state).
 */
public interface PipelineUnderTest extends AutoCloseable {
    /**
     * The level this pipeline runs on.
     *
     * @return the level
     */
    FlowTestLevel level();

    /**
     * The spec as given to {@link FlowTestLevel#open}.
     *
     * @return the spec
     */
    PipelineSpec spec();

    /**
     * The computation under test named at {@link FlowTestLevel#open}, or null if none was named.
     *
     * @return the computation's id, or null
     */
    @Nullable String computationId();

    /**
     * Sends a message into an internal stream as its writer would: on the harness, the
     * computation under test's {@code onMessage}; on the driver, {@link FlowTestDriver#pipe(String,
     * Map, long)}; on the broker, the encoded record produced (acknowledged) to the partition of
     * each internal topic carrying the stream that the runtime's range partitioning gives its
     * key. The system timestamp is the level's clock.
     *
     * @param streamId an internal stream that some computation reads
     * @param fields payload fields by name, numbers in the field's type ({@code 0L} for a
     *     {@code long}); a missing field takes its default, or null if nullable
     * @param eventTimestampNanos the event timestamp, nanoseconds since the epoch
     * @throws IllegalArgumentException if the stream is unknown, a source stream, read by no
     *     computation, not an input of the computation under test (harness), the fields do not make
     *     a valid payload
     * @throws IllegalStateException if the stream was completed
     */
    void pipe(String streamId, Map<String, ?> fields, long eventTimestampNanos);

    /**
     * Advances the event watermark of an internal stream as its writer would send it: on the
     * harness, the computation's input watermark and the watermark of every timer stream waiting
     * on it; on the driver, {@link FlowTestDriver#advanceWatermark(String, long)}; on the broker,
     * a control record of every task of the writer computation to every partition of every
     * internal topic carrying the stream. Due timers fire.
     *
     * @param streamId an internal stream that some computation reads
     * @param eventWatermarkNanos the new event watermark, nanoseconds since the epoch
     * @throws IllegalArgumentException if the stream is unknown, a source stream, read by no
     *     computation, not an input of the computation under test (harness), or the watermark is
     *     below one already set for the stream
     * @throws IllegalStateException if the stream was completed
     */
    void advanceWatermark(String streamId, long eventWatermarkNanos);

    /**
     * Advances the event watermark of every input stream of the computation under test; see
     * {@link #advanceWatermark(String, long)}. A stream already past it (or completed) is left as
     * it is.
     *
     * @param eventWatermarkNanos the new event watermark, nanoseconds since the epoch
     * @throws IllegalStateException if no computation under test was named at open
     */
    void advanceWatermark(long eventWatermarkNanos);

    /**
     * Completes an internal stream: its writer sends no more messages, both its watermarks go to
     * +infinity, so every event- and system-time timer waiting on it fires and its readers
     * complete once all their inputs did. Idempotent.
     *
     * @param streamId an internal stream that some computation reads
     * @throws IllegalArgumentException as {@link #advanceWatermark(String, long)}
     */
    void completeStream(String streamId);

    /**
     * Reads and consumes the payloads written to a stream since the last read, without waiting.
     *
     * @param streamId the stream to read
     * @return the payloads written since the last read, in write order; empty if none
     * @throws IllegalArgumentException if the stream is unknown, neither an internal stream nor a
     *     stream written to a decodable sink, or not an output of the computation under test
     *     (harness)
     */
    List<GenericRecord> readPayloads(String streamId);

    /**
     * Reads and consumes the payloads written to a stream since the last read once there are at
     * least {@code count} of them; see the class comment for what waiting means on each level.
     *
     * @param streamId the stream to read
     * @param count how many payloads to wait for
     * @return every payload read, at least {@code count}
     * @throws AssertionError if fewer than {@code count} arrived within the bound, naming how many
     * @throws IllegalArgumentException as {@link #readPayloads}
     */
    List<GenericRecord> awaitPayloads(String streamId, int count);

    /**
     * The committed value of state {@code stateName} of a computation for the key that a payload of
     * its input {@code inputStreamId} maps to.
     *
     * @param computationId the computation holding the state
     * @param stateName the Avro state's name
     * @param inputStreamId an input stream of the computation
     * @param payloadFields payload fields by name; only those the key reads are needed
     * @return the value, or empty when the key has no such state (never set, or cleared)
     * @throws IllegalArgumentException if the computation, state or stream is unknown, or (harness)
     *     the computation is not the one under test
     */
    Optional<GenericRecord> stateForPayload(String computationId, String stateName, String inputStreamId,
            Map<String, ?> payloadFields);

    /**
     * The computations whose every task reported completion so far (on the harness: the
     * computation under test once every input completed and no event- or system-time timer is
     * pending).
     *
     * @return the ids of the completed computations
     */
    Set<String> completedComputations();

    /**
     * The committed row of external state {@code name} of a computation (a manager, joiner or state joiner) for
     * the key that a payload of {@code inputStreamId} maps to: from the manager's store on the driver and in the
     * harness (a joined table in the harness: the rows seeded), from the table's topic on a broker (its
     * committed records up to their end, the pointer's version for a versioned reference).
     *
     * @param computationId the computation declaring the external state
     * @param name its name, e.g. {@code /reference_state}
     * @param inputStreamId an input or source stream of the computation
     * @param payloadFields payload fields by name: those the key reads
     * @return the row, empty if absent
     */
    Optional<GenericRecord> externalRowForPayload(String computationId, String name, String inputStreamId,
            Map<String, ?> payloadFields);

    /**
     * Waits until a computation completed; see the class comment for what waiting means.
     *
     * @param computationId the computation to wait for
     * @throws AssertionError if it did not complete within the bound
     */
    void awaitCompleted(String computationId);

    /** Stops what runs and deletes local state. Idempotent. */
    @Override
    void close();
}
