package io.flowkafka.examples.auditor;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The auditor pipeline: an external table of last logins, and a computation with only a visit stream that scans it
 * for the pipeline's lifetime.
 *
 * <pre>
 *   topic logins (JSON {"user", "ts"}, ts in epoch ms)
 *     -> read (Source)                                  stream raw_logins -> logins
 *     -> track (Transform, key farm_hash(user), user;
 *               manager /sessions)                      writes table &lt;pipeline&gt;.external.sessions
 *   auditor (Transform, no input, same key;
 *            joiner /sessions;
 *            key visitor audit: external_names [/sessions], finite: false, period)
 *     -> idle_users -> KafkaSink topic idle-users (JSON {"user", "last_login_ms", "idle_ms", "pass"})
 * </pre>
 *
 * <p>{@link LoginTracker} is the table's one writer; {@link IdleAuditor} reads each row in its visit. The auditor
 * has {@code desired_partition_count} tasks, each scanning its hash range of the table; with {@code finite: false}
 * it never completes (a {@code finite: true} visitor would make one pass and complete).
 */
public final class AuditorPipeline {
    /** The external table: its manager's and its joiner's name. */
    public static final String SESSIONS = "/sessions";
    /** The auditing computation. */
    public static final String AUDITOR = "auditor";
    /** Its key-visitor stream. */
    public static final String VISITOR = "audit";
    /** The output stream of idle users. */
    public static final String IDLE_USERS = "idle_users";
    /** The auditor's parameter: how long without a login makes a user idle, e.g. {@code "30d"}. */
    public static final String IDLE_PARAMETER = "idle_after";
    /** The default of {@value #IDLE_PARAMETER}. */
    public static final String DEFAULT_IDLE = "30d";

    private static final String NS = "io.flowkafka.examples.auditor";

    /** Payload of {@code raw_logins} and {@code logins}: a login of {@code user} at {@code ts} (epoch ms). */
    public static final Schema LOGIN_SCHEMA = SchemaBuilder.record("Login").namespace(NS).fields()
            .requiredString("user").requiredLong("ts").endRecord();
    /** A row of the sessions table. */
    public static final Schema SESSION_SCHEMA = SchemaBuilder.record("Session").namespace(NS).fields()
            .requiredString("user").requiredLong("last_login_ms").endRecord();
    /** Payload of {@code idle_users}: found idle at visit pass {@code pass}. */
    public static final Schema IDLE_SCHEMA = SchemaBuilder.record("IdleUser").namespace(NS).fields()
            .requiredString("user").requiredLong("last_login_ms").requiredLong("idle_ms").requiredLong("pass")
            .endRecord();

    private AuditorPipeline() {
    }

    /**
     * The spec.
     *
     * @param name the pipeline's name
     * @param loginsTopic the topic of logins
     * @param idleTopic the topic idle users are written to
     * @param idleAfter how long without a login makes a user idle, e.g. {@code "30d"}
     * @param period how long one audit pass over the table takes, e.g. {@code "1h"}
     * @param partitions the partition count of every computation
     * @return the spec, not yet validated
     */
    public static PipelineSpec spec(String name, String loginsTopic, String idleTopic, String idleAfter,
            String period, int partitions) {
        return spec(name, loginsTopic, idleTopic, idleAfter, period, partitions, false);
    }

    /**
     * The spec, with the audit visitor's {@code finite} setting.
     *
     * @param name the pipeline's name
     * @param loginsTopic the topic of logins
     * @param idleTopic the topic idle users are written to
     * @param idleAfter how long without a login makes a user idle, e.g. {@code "30d"}
     * @param period how long one audit pass over the table takes, e.g. {@code "1h"}
     * @param partitions the partition count of every computation
     * @param finite true: the auditor has no input to wait for, so its first pass is final and it completes after
     *     one full pass; false: it audits for the pipeline's lifetime
     * @return the spec, not yet validated
     */
    public static PipelineSpec spec(String name, String loginsTopic, String idleTopic, String idleAfter,
            String period, int partitions, boolean finite) {
        parseDuration(idleAfter); // fail here rather than at every visit
        // tag::spec[]
        return PipelineSpec.builder(name)
                .stream("raw_logins", LOGIN_SCHEMA)
                .stream("logins", LOGIN_SCHEMA)
                .stream(IDLE_USERS, IDLE_SCHEMA)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_logins", "KafkaSource", Map.of("topics", loginsTopic, "event_timestamp_column",
                                "ts"))
                        .outputStreamIds("logins"))
                .computation("track", c -> c.inputStreamIds("logins")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .externalStateManager(ExternalStateManagerSpec.of(SESSIONS, SESSION_SCHEMA))
                        .processingFunction(LoginTracker::new)
                        .desiredPartitionCount(partitions))
                .computation(AUDITOR, c -> c // no input_stream_ids, no source_streams: the visitor is its only work
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .externalStateJoiner(ExternalStateJoinerSpec.of(SESSIONS))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder(VISITOR).externalNames(SESSIONS)
                                .period(parseDuration(period)).finite(finite).build())
                        .parameter(IDLE_PARAMETER, idleAfter)
                        .streamsDependency(IDLE_USERS, List.of(VISITOR))
                        .processingFunction(IdleAuditor::new)
                        .outputStreamIds(IDLE_USERS)
                        .sink("idle_topic", "KafkaSink", List.of(IDLE_USERS), Map.of("topic", idleTopic,
                                "key_column", "user"))
                        .desiredPartitionCount(partitions))
                .build();
        // end::spec[]
    }

    /**
     * A positive duration such as {@code "30d"} or {@code "90s"} ({@link io.flowkafka.spec.Durations}).
     *
     * @param text the duration
     * @return the duration
     * @throws IllegalArgumentException if it is malformed or not positive
     */
    public static Duration parseDuration(String text) {
        Duration d = io.flowkafka.spec.Durations.parse(text, "duration");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("a positive duration is needed but was '" + text + "'");
        }
        return d;
    }
}
