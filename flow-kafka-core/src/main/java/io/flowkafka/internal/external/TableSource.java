package io.flowkafka.internal.external;

/** A table a call reads: pinned once per call, so that a versioned reference is read at one version. */
public interface TableSource {
    /** {@return a view of the table's current version (the table itself when it is not versioned)} */
    TableView pin();
}
