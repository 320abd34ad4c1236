/**
 * ClickHouse sinks on the transactional outbox: {@code TClickHouseBatchingSink} and
 * {@code TShardedClickHouseBatchingSink}, exactly once into block-deduplicating tables, through ClickHouse's HTTP
 * interface ({@link io.flowkafka.connectors.clickhouse.ClickHouseHttpClient}).
 */
package io.flowkafka.connectors.clickhouse;
