package io.flowkafka.connectors.clickhouse;

/**
 * A ClickHouse server's version as {@code SELECT version()} prints it, and what the sinks need to know of it: whether
 * the server has the {@code insert_deduplication_token} setting (ClickHouse 22.2 and later).
 *
 * @param major the major version, e.g. 18 or 24
 * @param minor the minor version
 * @param text the version as the server printed it
 */
public record ServerVersion(int major, int minor, String text) {
    /**
     * Parses {@code version()}'s answer, e.g. {@code 18.16.1} or {@code 24.8.4.13}.
     *
     * @param text the answer
     * @return the version
     * @throws IllegalArgumentException if the text is not a version
     */
    public static ServerVersion parse(String text) {
        String t = text.strip();
        String[] parts = t.split("\\.");
        try {
            return new ServerVersion(Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : 0, t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a ClickHouse version: '" + t + "'", e);
        }
    }

    /**
     * Whether the server deduplicates inserts by {@code insert_deduplication_token} (22.2 and later); older ones
     * deduplicate by the inserted block's checksum only.
     *
     * @return true if the server has the setting
     */
    public boolean hasDedupToken() {
        return major > 22 || (major == 22 && minor >= 2);
    }
}
