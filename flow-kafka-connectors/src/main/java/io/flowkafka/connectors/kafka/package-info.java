/**
 * Flow's {@code TKafkaSink} on Kafka: {@link io.flowkafka.connectors.kafka.KafkaSinkProvider},
 * found through {@link java.util.ServiceLoader} when this module is on the class path, delivers an
 * async sink's messages from the transactional outbox to a topic on the pipeline's own cluster or,
 * through {@code flow.sink.<sink id>.*} properties, another one. A spec names it by class
 * ({@code TKafkaSink}); applications do not call it.
 */
package io.flowkafka.connectors.kafka;
