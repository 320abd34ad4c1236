/**
 * The pipeline spec: computations, streams, sources and sinks, with YTsaurus Flow's field names.
 *
 * <p>Build one with {@link io.flowkafka.spec.PipelineSpec#builder(String)} or load a JSON file with
 * {@link io.flowkafka.spec.PipelineSpecLoader}; {@link io.flowkafka.spec.PipelineSpec#validate()}
 * reports every mistake at once, naming the computation, the field and the fix.
 */
@NullMarked
package io.flowkafka.spec;

import org.jspecify.annotations.NullMarked;
