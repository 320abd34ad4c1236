/**
 * The parts of one runtime instance behind {@link io.flowkafka.runtime.FlowRuntime}'s lifecycle: the Kafka
 * Streams properties, the Admin work before start, the background threads, completion watching, output-limit
 * measurement and what becomes of a failed stream thread.
 */
@NullMarked
package io.flowkafka.internal.runtime;

import org.jspecify.annotations.NullMarked;
