/**
 * flow-kafka's own meters that span engines: the per-task gauges (input lag, watermark lag, pending timers), the
 * consumer lag they read, and the pipeline-wide meters of one runtime (epoch commits, dead letters, Kafka Streams'
 * own metrics). The rule they keep: a per-task meter lives exactly as long as its task attempt, and nothing on the
 * record path looks a meter up.
 */
@NullMarked
package io.flowkafka.internal.metrics;

import org.jspecify.annotations.NullMarked;
