/**
 * Hourly static tables from a stream: {@link io.flowkafka.examples.hourlytables.HourlyTables} writes every page view
 * of a Kafka topic to a sequence of hourly Avro tables with {@code TArrivalOrderTableSink}, exactly once.
 */
@NullMarked
package io.flowkafka.examples.hourlytables;

import org.jspecify.annotations.NullMarked;
