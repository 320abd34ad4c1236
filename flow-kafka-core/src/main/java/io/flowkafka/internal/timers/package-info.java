/**
 * Durable per-key timers: the changelogged timer store, the watermark-hold index and bounded,
 * resumable firing scans. See {@link io.flowkafka.internal.timers.TimerStore}.
 */
@NullMarked
package io.flowkafka.internal.timers;

import org.jspecify.annotations.NullMarked;
