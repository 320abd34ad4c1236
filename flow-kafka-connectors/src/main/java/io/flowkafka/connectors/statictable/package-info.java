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
 *       {@code GenericRecord}s, the reader by row ranges;</li>
 *   <li>{@link io.flowkafka.connectors.statictable.TableTimestampLocator}, which finds a table's
 *       timestamp (ISO 8601 names by default);</li>
 *   <li>{@link io.flowkafka.connectors.statictable.TableReadPlan} and
 *       {@link io.flowkafka.connectors.statictable.PlannedSchedule}, the source's
 *       {@code use_planned_timestamps} rules;</li>
 *   <li>{@link io.flowkafka.connectors.statictable.ArrivalOrderSinkParameters} and
 *       {@link io.flowkafka.connectors.statictable.TableSlot}, the arrival-order sink's slot
 *       arithmetic;</li>
 *   <li>{@link io.flowkafka.connectors.statictable.ArrivalOrderSinkProvider}, the sink
 *       {@code TArrivalOrderTableSink}, staged by its tasks and made visible when their epochs commit.</li>
 * </ul>
 */
@NullMarked
package io.flowkafka.connectors.statictable;

import org.jspecify.annotations.NullMarked;
