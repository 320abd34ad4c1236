/**
 * TTL eviction and periodic per-key aggregates with a key visitor: {@link io.flowkafka.examples.ttl.TtlPipeline}
 * keeps per-user state ({@code last_seen}, {@code daily}); its key-visitor stream {@code evict} visits every user
 * once per period, deletes users idle longer than the {@code ttl} parameter and emits the others' aggregate to
 * {@code daily_totals}. The pattern is explained in {@link io.flowkafka.examples.ttl.TtlEviction}.
 */
@NullMarked
package io.flowkafka.examples.ttl;

import org.jspecify.annotations.NullMarked;
