/**
 * The dynamic spec shared by every instance of a pipeline: its compacted topic, the publishing of a change
 * (validated whole, then written under a transaction that fences concurrent writers) and the listener that applies
 * every new document on each instance.
 */
@NullMarked
package io.flowkafka.internal.dynamic;

import org.jspecify.annotations.NullMarked;
