/** YTsaurus-compatible hashing of key columns ({@code farm_hash}). */
@NullMarked
package io.flowkafka.internal.hash;

import org.jspecify.annotations.NullMarked;
