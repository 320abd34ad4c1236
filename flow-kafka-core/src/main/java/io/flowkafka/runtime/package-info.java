/**
 * Running a pipeline: {@link io.flowkafka.runtime.FlowRuntime} and its configuration
 * {@link io.flowkafka.runtime.FlowConfig}.
 */
@NullMarked
package io.flowkafka.runtime;

import org.jspecify.annotations.NullMarked;
