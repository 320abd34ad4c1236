package io.flowkafka.spec;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A column of a computation's {@code group_by_schema}.
 *
 * @param name the column name
 * @param type the column type; the first column must be {@code uint64}
 * @param expression how to compute it from the payload, e.g. {@code farm_hash(user_id)}; null
 *     means the payload field of the same name
 */
public record GroupByColumn(String name, ColumnType type, @Nullable String expression) {
    /**
     * Checks the fields.
     *
     * @param name the column name; not null
     * @param type the column type; not null
     * @param expression how to compute it from the payload; null means the payload field of the same name
     */
    public GroupByColumn {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }

    /**
     * A column copied from the payload field of the same name.
     *
     * @param name the column name, also the payload field's
     * @param type the column type
     * @return the column, without an expression
     */
    public static GroupByColumn of(String name, ColumnType type) {
        return new GroupByColumn(name, type, null);
    }

    /**
     * A computed column, e.g. {@code GroupByColumn.of("hash", ColumnType.UINT64, "farm_hash(user_id)")}.
     *
     * @param name the column name
     * @param type the column type
     * @param expression how to compute it from the payload, e.g. {@code farm_hash(user_id)}
     * @return the column
     */
    public static GroupByColumn of(String name, ColumnType type, String expression) {
        return new GroupByColumn(name, type, expression);
    }
}
