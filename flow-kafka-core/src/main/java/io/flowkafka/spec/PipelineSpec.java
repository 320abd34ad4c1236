package io.flowkafka.spec;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.avro.Schema;

/**
 * A pipeline's static spec: its streams and computations, with Flow's field names.
 *
 * <p>Immutable. {@link #validate()} finds every mistake at once; {@link #validated()} throws
 * {@link InvalidSpecException} listing them. Example:
 *
 * <pre>{@code
 * PipelineSpec spec = PipelineSpec.builder("activity")
 *     .stream("events", eventSchema)
 *     .stream("counts", countSchema)
 *     .computation("read", c -> c.kind(ComputationKind.SOURCE)
 *         .source("events", "KafkaSource", Map.of("topics", "user-events"))
 *         .outputStreamIds("events"))
 *     .computation("count", c -> c.inputStreamIds("events").outputStreamIds("counts")
 *         .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
 *         .state("total", totalSchema).processingFunction(ActivityCounter::new))
 *     .build();
 * }</pre>
 *
 * @param name the pipeline name: the Kafka Streams {@code application.id} and topic prefix
 * @param streams declared streams by id, in declaration order
 * @param computations computations by id, in declaration order
 * @param warnings problems that do not stop the pipeline (unknown fields), found while loading; see
 *     {@link #allWarnings()} for these and those validation finds
 */
public record PipelineSpec(String name, Map<String, StreamSpec> streams, Map<String, ComputationSpec> computations,
        List<SpecProblem> warnings) {

    /**
     * Checks the name and copies the collections, unmodifiable and in their order.
     *
     * @param name the pipeline name; not null
     * @param streams declared streams by id; copied
     * @param computations computations by id; copied
     * @param warnings problems found while loading; copied
     */
    public PipelineSpec {
        Objects.requireNonNull(name, "name");
        streams = Collections.unmodifiableMap(new LinkedHashMap<>(streams));
        computations = Collections.unmodifiableMap(new LinkedHashMap<>(computations));
        warnings = List.copyOf(warnings);
    }

    /**
     * A builder for a pipeline: the usual start of a programmatic spec.
     *
     * @param name the pipeline name; topic names and the application.id derive from it
     * @return an empty builder
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /**
     * The computation writing {@code streamId}, if any.
     *
     * @param streamId a stream id
     * @return the first computation that outputs the stream or reads it from a source; empty if none
     */
    public Optional<ComputationSpec> writerOf(String streamId) {
        for (ComputationSpec c : computations.values()) {
            if (c.outputStreamIds().contains(streamId)
                    || c.sourceStreams().stream().anyMatch(s -> s.streamId().equals(streamId))) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /**
     * The computations reading {@code streamId}, in declaration order.
     *
     * @param streamId a stream id
     * @return the computations with the stream among their input streams; empty if none
     */
    public List<ComputationSpec> readersOf(String streamId) {
        List<ComputationSpec> readers = new ArrayList<>();
        for (ComputationSpec c : computations.values()) {
            if (c.inputStreamIds().contains(streamId)) {
                readers.add(c);
            }
        }
        return readers;
    }

    /**
     * Every error and warning of this spec, errors first; empty when the spec is valid.
     *
     * @return the problems found by validation
     */
    public List<SpecProblem> validate() {
        return SpecValidator.validate(this);
    }

    /**
     * Every warning of this spec, in one list: those found while loading ({@link #warnings()}:
     * unknown or unsupported fields, null parameters), then those {@link #validate()} finds (unknown
     * source, timer or key-visitor parameters, unused streams, ...). A warning names something the
     * pipeline ignores, so it often hides a typo: {@code FlowRuntime.create} logs each one, and
     * rejects them all with {@code flow.spec.warnings=fail}.
     *
     * @return the warnings; empty if none
     */
    public List<SpecProblem> allWarnings() {
        return validate().stream().filter(p -> p.severity() == SpecProblem.Severity.WARNING).toList();
    }

    /**
     * This spec, if it has no errors.
     *
     * @return this spec
     * @throws InvalidSpecException listing every error
     */
    public PipelineSpec validated() {
        List<SpecProblem> problems = validate();
        if (problems.stream().anyMatch(p -> p.severity() == SpecProblem.Severity.ERROR)) {
            throw InvalidSpecException.of(name, problems);
        }
        return this;
    }

    /** Builds a {@link PipelineSpec}; {@link #build()} does not validate. */
    public static final class Builder {
        private final String name;
        private final Map<String, StreamSpec> streams = new LinkedHashMap<>();
        private final Map<String, ComputationSpec> computations = new LinkedHashMap<>();
        private final List<SpecProblem> warnings = new ArrayList<>();

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /**
         * Declares a stream.
         *
         * @param id the stream id
         * @param schema the Avro record schema of its messages
         * @return this builder
         * @throws InvalidSpecException if the stream was already declared
         */
        public Builder stream(String id, Schema schema) {
            if (streams.putIfAbsent(id, new StreamSpec(id, schema)) != null) {
                throw new InvalidSpecException(name, List.of(SpecProblem.error(null, "streams." + id, "stream '" + id
                        + "' is declared twice", "declare each stream once, or give the second one another id")));
            }
            return this;
        }

        /**
         * Adds a computation.
         *
         * @param computation the computation, e.g. from {@link ComputationSpec#builder(String)}
         * @return this builder
         * @throws InvalidSpecException if a computation with the same id was already added
         */
        public Builder computation(ComputationSpec computation) {
            if (computations.putIfAbsent(computation.id(), computation) != null) {
                throw new InvalidSpecException(name, List.of(SpecProblem.error(computation.id(), "computations."
                        + computation.id(), "computation '" + computation.id() + "' is declared twice",
                        "give each computation its own id")));
            }
            return this;
        }

        /**
         * Adds a computation configured by {@code configure}, e.g.
         * {@code .computation("count", c -> c.inputStreamIds("clicks").processingFunction(Count::new))}.
         *
         * @param id the computation id
         * @param configure sets the computation's fields on a new {@link ComputationSpec.Builder}
         * @return this builder
         * @throws InvalidSpecException naming the computation if {@code configure} passes a value a
         *     setter rejects (e.g. a negative out-of-orderness bound), or the id is taken
         */
        public Builder computation(String id, Consumer<ComputationSpec.Builder> configure) {
            ComputationSpec.Builder b = ComputationSpec.builder(id);
            try {
                configure.accept(b);
            } catch (IllegalArgumentException e) {
                throw builderMistake(id, e);
            }
            return computation(b.build());
        }

        /** A setter's rejection as a spec error naming the computation and, when the message starts with it, the field. */
        private InvalidSpecException builderMistake(String id, RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("^([a-z_][a-z0-9_.\\[\\]]*) ").matcher(message);
            String field = m.find() && (m.group(1).contains("_") || m.group(1).contains(".")) ? m.group(1)
                    : "computations." + id;
            int semicolon = message.indexOf("; ");
            String what = semicolon < 0 ? message : message.substring(0, semicolon);
            String fix = semicolon < 0 ? "pass a valid value to the builder of computation '" + id + "'"
                    : message.substring(semicolon + 2);
            InvalidSpecException ex = new InvalidSpecException(name, List.of(SpecProblem.error(id, field, what, fix)));
            ex.initCause(e);
            return ex;
        }

        /**
         * Records a warning (used by loaders for unknown fields).
         *
         * @param warning the warning, reported by {@link PipelineSpec#validate()}
         * @return this builder
         */
        public Builder warning(SpecProblem warning) {
            warnings.add(warning);
            return this;
        }

        /** Declares a stream without a schema (reported by validation). */
        Builder streamWithoutSchema(String id) {
            streams.put(id, new StreamSpec(id, null));
            return this;
        }

        /**
         * Builds the spec; the builder stays usable.
         *
         * @return the spec, not yet validated
         */
        public PipelineSpec build() {
            return new PipelineSpec(name, streams, computations, warnings);
        }
    }
}
