package io.flowkafka.spi;

import io.flowkafka.spec.SinkSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Objects;

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
 */
public record SinkContext(String pipeline, String applicationId, String computation, SinkSpec sink,
        Map<String, Object> pipelineClientProperties, Map<String, Object> sinkProperties, MeterRegistry meters,
        String deadLetterTopic) {
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
