/**
 * A small, documented service-provider interface for flow-kafka's own modules (testing,
 * connectors) and for tools: how messages, keys and state are encoded in Kafka records and stores.
 * Stable enough for tools; most applications never need it.
 */
@NullMarked
package io.flowkafka.spi;

import org.jspecify.annotations.NullMarked;
