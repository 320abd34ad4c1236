/**
 * Avro with a schema registry: a Kafka serde speaking Confluent's wire format (magic byte 0, a
 * 4-byte big-endian schema id, then Avro binary) and a small client for the Confluent Schema
 * Registry REST API.
 *
 * <p>Entry points:
 * <ul>
 *   <li>{@link io.flowkafka.connectors.registry.ConfluentAvroSerde} (and its serializer and
 *       deserializer), configured with Confluent's keys: {@code schema.registry.url},
 *       {@code auto.register.schemas}, {@code use.latest.version}, {@code basic.auth.user.info};</li>
 *   <li>{@link io.flowkafka.connectors.registry.GenericRecordSerdes} makes a
 *       {@code Serde<GenericRecord>} from a class name and a config map, so that a pipeline can
 *       name Confluent's own {@code GenericAvroSerde} instead;</li>
 *   <li>{@link io.flowkafka.connectors.registry.SchemaRegistryClient}, implemented over HTTP by
 *       {@link io.flowkafka.connectors.registry.RestSchemaRegistryClient} and in memory by
 *       {@link io.flowkafka.connectors.registry.MockSchemaRegistry} ({@code mock://scope} URLs).</li>
 * </ul>
 */
@NullMarked
package io.flowkafka.connectors.registry;

import org.jspecify.annotations.NullMarked;
