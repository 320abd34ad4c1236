/**
 * Draining a pipeline before it stops: Kafka Streams' main consumer with its source topics paused
 * ({@link io.flowkafka.internal.drain.SourcePausingConsumer}, installed by
 * {@link io.flowkafka.internal.drain.DrainingClientSupplier}), the check that no data record is
 * left between computations ({@link io.flowkafka.internal.drain.InternalBacklog}) and when that
 * counts as drained ({@link io.flowkafka.internal.drain.DrainCondition}).
 */
@NullMarked
package io.flowkafka.internal.drain;

import org.jspecify.annotations.NullMarked;
