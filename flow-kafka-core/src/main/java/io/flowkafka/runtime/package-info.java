/**
 * Running a pipeline: {@link io.flowkafka.runtime.FlowRuntime} and its configuration
 * {@link io.flowkafka.runtime.FlowConfig}.
 *
 * <p>{@link io.flowkafka.runtime.FlowRuntime#create} takes a validated
 * {@link io.flowkafka.spec.PipelineSpec} and the {@code Properties} of Kafka Streams, where the
 * {@code flow.*} keys of {@link io.flowkafka.runtime.FlowConfig} sit beside Kafka's own; every
 * other key passes through to Kafka Streams. {@code docs/configuration.md}, generated from
 * {@link io.flowkafka.runtime.FlowConfig#configDef()}, lists every {@code flow.*} key with its
 * type, default and valid values.
 */
@NullMarked
package io.flowkafka.runtime;

import org.jspecify.annotations.NullMarked;
