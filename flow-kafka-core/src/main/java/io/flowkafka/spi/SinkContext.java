package io.flowkafka.spi;

import io.flowkafka.spec.SinkSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;

/**
 * What a {@link SinkProvider} gets to create a sink's deliverer in one runtime instance.
 *
 * @param pipeline the pipeline name
 * @param applicationId the Kafka Streams application id of the pipeline
 * @param computation the computation the sink belongs to
 * @param sink the sink's spec (semantics: topic, columns, guarantees)
 * @param pipelineClientProperties client properties of the pipeline's own cluster (bootstrap
 *     servers, security): the default target of a Kafka sink
 * @param sinkProperties the deployment properties of this sink: every {@code flow.sink.<sink id>.*}
 *     property with the prefix removed (e.g. {@code bootstrap.servers} of another cluster)
 * @param meters where the sink registers its metrics
 * @param deadLetterTopic the pipeline's dead-letter topic, on the pipeline's cluster: where a sink puts a record its
 *     target rejects for good, with the reason in {@code flow.dlq.*} headers
 * @param inputSchemas the schemas of the sink's input streams by stream id (a table sink takes its tables' schema from
 *     them); empty when the creator did not give them
 */
public record SinkContext(String pipeline, String applicationId, String computation, SinkSpec sink,
        Map<String, Object> pipelineClientProperties, Map<String, Object> sinkProperties, MeterRegistry meters,
        String deadLetterTopic, Map<String, Schema> inputSchemas) {
    /**
     * Checks the context and copies the property maps.
     *
     * @param pipeline the pipeline name
     * @param applicationId the Kafka Streams application id of the pipeline
     * @param computation the computation the sink belongs to
     * @param sink the sink's spec (semantics: topic, columns, guarantees)
     * @param pipelineClientProperties client properties of the pipeline's own cluster (bootstrap
     *     servers, security): the default target of a Kafka sink
     * @param sinkProperties the deployment properties of this sink: every {@code flow.sink.<sink id>.*}
     *     property with the prefix removed (e.g. {@code bootstrap.servers} of another cluster)
     * @param meters where the sink registers its metrics
     * @param deadLetterTopic the pipeline's dead-letter topic, on the pipeline's cluster: where a sink puts a record its
     *     target rejects for good, with the reason in {@code flow.dlq.*} headers
     * @param inputSchemas the schemas of the sink's input streams by stream id; copied
     * @throws NullPointerException if a component is null
     */
    public SinkContext {
        Objects.requireNonNull(pipeline, "pipeline");
        Objects.requireNonNull(applicationId, "applicationId");
        Objects.requireNonNull(computation, "computation");
        Objects.requireNonNull(sink, "sink");
        pipelineClientProperties = Map.copyOf(pipelineClientProperties);
        sinkProperties = Map.copyOf(sinkProperties);
        Objects.requireNonNull(meters, "meters");
        Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
        inputSchemas = Map.copyOf(inputSchemas);
    }

    /**
     * A context without input schemas.
     *
     * @param pipeline the pipeline name
     * @param applicationId the Kafka Streams application id of the pipeline
     * @param computation the computation the sink belongs to
     * @param sink the sink's spec
     * @param pipelineClientProperties client properties of the pipeline's own cluster
     * @param sinkProperties the deployment properties of this sink, {@code flow.sink.<sink id>.} prefix removed
     * @param meters where the sink registers its metrics
     * @param deadLetterTopic the pipeline's dead-letter topic
     */
    public SinkContext(String pipeline, String applicationId, String computation, SinkSpec sink,
            Map<String, Object> pipelineClientProperties, Map<String, Object> sinkProperties, MeterRegistry meters,
            String deadLetterTopic) {
        this(pipeline, applicationId, computation, sink, pipelineClientProperties, sinkProperties, meters,
                deadLetterTopic, Map.of());
    }

    /**
     * Decodes the value of an outbox record of the sink's input stream {@code streamId} into a record of the
     * stream's schema, as the sink's {@code format} ({@code json}, the default, or {@code avro}) encoded it.
     *
     * @param streamId an input stream of the sink, whose schema is in {@link #inputSchemas()}
     * @param value the outbox record's value
     * @return the message payload
     * @throws IllegalArgumentException if the stream's schema is unknown, the sink writes a {@code payload_column} or
     *     through a {@code value_serde}, or the value does not decode
     */
    public GenericRecord decodeValue(String streamId, byte[] value) {
        Objects.requireNonNull(value, "value");
        Schema schema = inputSchemas.get(streamId);
        if (schema == null) {
            throw new IllegalArgumentException("sink '" + sink.id() + "' has no schema for input stream '" + streamId
                    + "'; known: " + inputSchemas.keySet());
        }
        if (sink.parameters().containsKey("payload_column") || sink.parameters().containsKey("value_serde")) {
            throw new IllegalArgumentException("sink '" + sink.id() + "' writes a payload_column or a value_serde's "
                    + "bytes, which cannot be decoded back into a record");
        }
        return "avro".equals(String.valueOf(sink.parameters().getOrDefault("format", "json")))
                ? new io.flowkafka.internal.serde.AvroCodec(schema).decode(value)
                : io.flowkafka.internal.serde.JsonRecords.fromJson(value, schema);
    }

    /**
     * A context whose dead-letter topic is {@code <pipeline>.dlq} (no topic prefix).
     *
     * @param pipeline the pipeline name
     * @param applicationId the Kafka Streams application id of the pipeline
     * @param computation the computation the sink belongs to
     * @param sink the sink's spec
     * @param pipelineClientProperties client properties of the pipeline's own cluster
     * @param sinkProperties the deployment properties of this sink, {@code flow.sink.<sink id>.} prefix removed
     * @param meters where the sink registers its metrics
     */
    public SinkContext(String pipeline, String applicationId, String computation, SinkSpec sink,
            Map<String, Object> pipelineClientProperties, Map<String, Object> sinkProperties, MeterRegistry meters) {
        this(pipeline, applicationId, computation, sink, pipelineClientProperties, sinkProperties, meters,
                pipeline + ".dlq");
    }
}
