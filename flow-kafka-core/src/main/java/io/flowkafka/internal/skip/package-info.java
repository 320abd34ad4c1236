/**
 * {@code skip_if_expression}: a small predicate language over a message's payload fields and its {@code $} variables,
 * parsed once and evaluated per input message, and the per-computation setting that holds its current value.
 */
@NullMarked
package io.flowkafka.internal.skip;

import org.jspecify.annotations.NullMarked;
