/**
 * Flow's static tables on files: immutable batch tables kept as directories of Avro
 * object-container part files (reference 001, "Static tables in YTsaurus Flow").
 *
 * <p>Entry points:
 * <ul>
 *   <li>{@link io.flowkafka.connectors.statictable.TablesDirectory}, the store SPI: list, read
 *       attributes, publish atomically, remove; implemented on a local filesystem by
 *       {@link io.flowkafka.connectors.statictable.LocalTablesDirectory};</li>
 *   <li>{@link io.flowkafka.connectors.statictable.StaticTableWriter} and
 *       {@link io.flowkafka.connectors.statictable.StaticTableReader} to write and read a table of
 *       {@code GenericRecord}s, the reader by row ranges.</li>
 * </ul>
 */
@NullMarked
package io.flowkafka.connectors.statictable;

import org.jspecify.annotations.NullMarked;
