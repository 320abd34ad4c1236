/**
 * The process-function API: what a computation's user code implements and receives.
 *
 * <p>Names follow YTsaurus Flow's Java API ({@link io.flowkafka.api.RowFunction#onMessage},
 * {@link io.flowkafka.api.OutputCollector#addTimer}) so that a Flow user recognises them.
 * All timestamps are nanoseconds since the epoch, as in Flow.
 */
@NullMarked
package io.flowkafka.api;

import org.jspecify.annotations.NullMarked;
