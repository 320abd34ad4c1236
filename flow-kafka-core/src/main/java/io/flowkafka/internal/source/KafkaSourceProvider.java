package io.flowkafka.internal.source;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spec.StreamSpec;
import io.flowkafka.spi.SourceProvider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Core's {@code KafkaSource}: a Kafka topic read by the pipeline's own Kafka Streams topology. Keeps its spec
 * checks: the parameters of {@link KafkaSourceParameters}, {@code key_partitioned} only where a Transform
 * computation reads the source by key, and one topic per source read so.
 *
 * <p>Thread-safe: holds no state.
 */
public final class KafkaSourceProvider implements SourceProvider {
    /** The {@code source_class_name} of a Kafka source. */
    public static final String KAFKA_SOURCE = "KafkaSource";

    /** For {@link java.util.ServiceLoader}. */
    public KafkaSourceProvider() {
    }

    @Override
    public Set<String> sourceClassNames() {
        return Set.of(KAFKA_SOURCE);
    }

    @Override
    public Set<String> parameterNames(SourceSpec source) {
        return KafkaSourceParameters.KNOWN;
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream) {
        List<Problem> problems = new ArrayList<>();
        Object topics = source.parameters().containsKey("topics") ? source.parameters().get("topics")
                : source.parameters().get("topic");
        if (!validTopics(topics)) {
            problems.add(Problem.error("parameters.topics", "KafkaSource of stream '" + source.streamId() + "' "
                    + (topics == null ? "has no 'topics' parameter" : "has an invalid 'topics' parameter " + topics),
                    "set parameters.topics to a non-empty list of topic names (or a comma-separated string)"));
        }
        if (source.parameters().containsKey("topics") && source.parameters().containsKey("topic")) {
            problems.add(Problem.error("parameters.topic", "KafkaSource of stream '" + source.streamId() + "' sets "
                    + "both topic and topics; only topics would be read", "list every topic in parameters.topics "
                    + "and remove parameters.topic"));
        }
        for (KafkaSourceParameters.Problem p : KafkaSourceParameters.validate(source,
                stream == null ? null : stream.schema())) {
            problems.add(new Problem(p.error() ? SpecProblem.Severity.ERROR : SpecProblem.Severity.WARNING, p.field(),
                    p.message(), p.fix()));
        }
        if (source.parameters().containsKey("event_timestamp_unit")
                && !source.parameters().containsKey("event_timestamp_column")
                && computation.watermarkStrategy().timestampColumn() == null) {
            problems.add(Problem.warning("parameters.event_timestamp_unit", "event_timestamp_unit of stream '"
                    + source.streamId() + "' is ignored: no event timestamp column is read, and the record "
                    + "timestamp is always in milliseconds", "set event_timestamp_column (or the computation's "
                    + "watermark_strategy.event_timestamp_assigner.column), or remove event_timestamp_unit"));
        }
        if (KafkaSourceParameters.keyPartitioned(source) && !computation.readsKeyedSource()) {
            String kind = computation.kind().shortName();
            problems.add(Problem.error("parameters.key_partitioned", "key_partitioned is set on a source of "
                    + kind + " computation '" + computation.id() + "', but only a Transform computation "
                    + "reads a source by key (a " + kind + " computation is keyed by source "
                    + "partition)", "make '" + computation.id() + "' a Transform computation with a group_by_schema to "
                    + "read the topic by key in one step, or remove key_partitioned"));
        }
        return problems;
    }

    /** Read by key directly: the topic is declared {@code key_partitioned}, and it is one topic. */
    @Override
    public List<Problem> validateKeyedRead(ComputationSpec computation, SourceSpec source) {
        List<Problem> problems = new ArrayList<>();
        String id = computation.id();
        String field = "source_streams." + source.streamId() + ".parameters";
        if (!KafkaSourceParameters.keyPartitioned(source)) {
            problems.add(Problem.error("parameters.key_partitioned", "Transform computation '" + id + "' reads source '"
                    + source.streamId() + "' directly, which needs a topic partitioned by the group-by key (every "
                    + "record of one key in one partition): state, timers and outputs of a key live in one task",
                    "if the producers partition the topic by this key (e.g. the record key is the key column), set "
                            + field + ".key_partitioned: true; otherwise make '" + id + "' a Source computation "
                            + "and read its output stream in a Transform computation (records are then "
                            + "re-partitioned by key through an internal stream)"));
        }
        if (KafkaSourceParameters.topics(source).size() > 1) {
            problems.add(Problem.error("parameters.topics", "a key-partitioned source read by a Transform computation "
                    + "has one topic, but source '" + source.streamId() + "' of '" + id + "' has "
                    + KafkaSourceParameters.topics(source), "list one topic per source: declare a source stream "
                    + "for each topic (their topics must have the same partition count)"));
        }
        return problems;
    }

    private static boolean validTopics(@Nullable Object topics) {
        if (topics instanceof String s) {
            return !s.isBlank() && Arrays.stream(s.split(",")).noneMatch(String::isBlank);
        }
        if (topics instanceof Collection<?> list) {
            return !list.isEmpty() && list.stream().allMatch(t -> t instanceof String s && !s.isBlank());
        }
        return false;
    }
}
