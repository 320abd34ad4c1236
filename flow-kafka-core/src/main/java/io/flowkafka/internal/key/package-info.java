/** Key expressions of {@code group_by_schema}: parsing against a payload schema and evaluation. */
@NullMarked
package io.flowkafka.internal.key;

import org.jspecify.annotations.NullMarked;
