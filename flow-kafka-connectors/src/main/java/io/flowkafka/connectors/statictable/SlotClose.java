package io.flowkafka.connectors.statictable;

/** What the arrival-order sink does with its current slot now; decided by {@link TableSlot#decide}. */
public enum SlotClose {
    /** Keep the slot open. */
    NONE,
    /** Close the non-empty slot: it reached {@code max_row_count} or {@code max_data_weight}. */
    BY_LIMIT,
    /** Close the non-empty slot: the wall clock reached its end. */
    BY_TIME,
    /** Write the slot as an empty table: the empty-slot rule holds. */
    EMPTY
}
