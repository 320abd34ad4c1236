package io.flowkafka.spi;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spec.StreamSpec;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A family of sources ({@code source_class_name}s), found with {@link java.util.ServiceLoader} (register the
 * implementation in {@code META-INF/services/io.flowkafka.spi.SourceProvider}). {@code flow-kafka-core} provides
 * {@code KafkaSource}; the spec validator looks providers up by class name and reports a source class no provider
 * serves as unknown.
 *
 * <p>A source reads Kafka topics unless {@link #punctuated()} returns a reader: the runtime then calls that reader
 * on a punctuation of each task of the Source computation.
 *
 * <p>Implementations are stateless and thread-safe, with a public no-argument constructor.
 */
public interface SourceProvider {
    /**
     * The {@code source_class_name}s this provider serves, e.g. {@code KafkaSource}.
     *
     * @return the class names, not empty
     */
    Set<String> sourceClassNames();

    /**
     * Every parameter name the source reads; the spec validator warns about any other (with a "did you mean" among
     * these), which the source ignores.
     *
     * @param source a source whose {@code source_class_name} this provider serves
     * @return the names of the parameters the source reads
     */
    Set<String> parameterNames(SourceSpec source);

    /**
     * Checks a source's parameters at spec load, before anything starts.
     *
     * @param computation the computation whose {@code source_streams} declare the source
     * @param source a source whose {@code source_class_name} this provider serves
     * @param stream the declaration of the source's stream, or null if {@code streams} has none (reported elsewhere)
     * @return one entry per problem, errors and warnings, in parameter order; empty when the source is valid
     */
    List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream);

    /**
     * The reader of a source that reads no Kafka topic, run on a punctuation of each task of its Source computation
     * (see {@link PunctuatedSource}).
     *
     * @return the punctuated source, or null (the default) for a source read from Kafka topics
     */
    default @Nullable PunctuatedSource punctuated() {
        return null;
    }

    /**
     * Checks a source that a Transform computation reads directly, keyed by its {@code group_by_schema}
     * ({@link ComputationSpec#readsKeyedSource()}), instead of through a Source computation and an internal stream.
     * By default such a read is rejected.
     *
     * @param computation the Transform computation that reads the source
     * @param source a source whose {@code source_class_name} this provider serves
     * @return one entry per problem; empty when the source can be read so
     */
    default List<Problem> validateKeyedRead(ComputationSpec computation, SourceSpec source) {
        return List.of(Problem.error("source_class_name", "Transform computation '" + computation.id() + "' reads "
                + source.sourceClassName() + " source '" + source.streamId() + "' directly, which "
                + source.sourceClassName() + " does not support", "read the source in a Source computation and its "
                + "output stream in '" + computation.id() + "'"));
    }

    /**
     * A problem with a source's spec.
     *
     * @param severity error (the pipeline cannot start) or warning
     * @param field the field relative to the source, e.g. {@code parameters.topics}
     * @param message what is wrong, naming the offending value
     * @param fix how to fix it
     */
    record Problem(SpecProblem.Severity severity, String field, String message, String fix) {
        /**
         * Checks that every component is set.
         *
         * @param severity error (the pipeline cannot start) or warning
         * @param field the field relative to the source, e.g. {@code parameters.topics}
         * @param message what is wrong, naming the offending value
         * @param fix how to fix it
         * @throws NullPointerException if a component is null
         */
        public Problem {
            Objects.requireNonNull(severity, "severity");
            Objects.requireNonNull(field, "field");
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(fix, "fix");
        }

        /**
         * An error: the pipeline cannot start.
         *
         * @param field the field relative to the source, e.g. {@code parameters.topics}
         * @param message what is wrong, naming the offending value
         * @param fix how to fix it
         * @return a problem of severity {@link SpecProblem.Severity#ERROR}
         */
        public static Problem error(String field, String message, String fix) {
            return new Problem(SpecProblem.Severity.ERROR, field, message, fix);
        }

        /**
         * A warning: the pipeline starts, but the spec likely says something it does not mean.
         *
         * @param field the field relative to the source, e.g. {@code parameters.topics}
         * @param message what is wrong, naming the offending value
         * @param fix how to fix it
         * @return a problem of severity {@link SpecProblem.Severity#WARNING}
         */
        public static Problem warning(String field, String message, String fix) {
            return new Problem(SpecProblem.Severity.WARNING, field, message, fix);
        }
    }
}
