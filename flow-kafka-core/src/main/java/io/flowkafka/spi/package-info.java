/**
 * A small, documented service-provider interface for flow-kafka's own modules (testing,
 * connectors) and for tools, over the runtime's own code:
 * <ul>
 *   <li>{@link io.flowkafka.spi.PipelineCodecs}: how messages, keys and state are encoded in Kafka
 *       records and stores;</li>
 *   <li>{@link io.flowkafka.spi.ComputationCalls}: the process-function calls of one computation
 *       outside a topology (keys, the function factory, the call context and its rules, message
 *       ids), as the unit harness runs them.</li>
 * </ul>
 * Stable enough for tools; most applications never need it. SPI for flow-kafka's own modules; may
 * change between minor versions.
 */
@NullMarked
package io.flowkafka.spi;

import org.jspecify.annotations.NullMarked;
