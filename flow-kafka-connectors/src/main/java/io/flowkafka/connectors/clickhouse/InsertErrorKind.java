package io.flowkafka.connectors.clickhouse;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.Set;

/**
 * The class of a failed ClickHouse request, which decides what the non-batching sinks do with it (reference 002,
 * {@code TAtLeastOnceClickHouseSink}: "Known transient errors are retried without a limit; unclassified errors are
 * attempted at most max_insert_attempts times in total (10 by default), and permanent errors fail immediately").
 * Owns the table of ClickHouse error codes and transport failures behind that rule, and the rule of
 * {@code TAtMostOnceClickHouseSink} that tells a request that never reached the server ({@link #notSent}) from one
 * whose INSERT started.
 */
public enum InsertErrorKind {
    /** Overload, replica or ZooKeeper trouble, timeouts, an unreachable server: a retry can succeed. */
    TRANSIENT,
    /** A missing table or column, rows that do not parse, a type mismatch, a syntax error, access denied. */
    PERMANENT,
    /** Anything else: attempted at most {@code max_insert_attempts} times in total. */
    UNCLASSIFIED;

    /**
     * Codes a retry can fix: 159 TIMEOUT_EXCEEDED, 202
     * TOO_MANY_SIMULTANEOUS_QUERIES, 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 241 MEMORY_LIMIT_EXCEEDED, 242
     * TABLE_IS_READ_ONLY (a replica lost ZooKeeper), 252 TOO_MANY_PARTS, 285 TOO_FEW_LIVE_REPLICAS, 319
     * UNKNOWN_STATUS_OF_INSERT, 999 KEEPER_EXCEPTION.
     */
    static final Set<Integer> TRANSIENT_CODES = Set.of(159, 202, 209, 210, 241, 242, 252, 285, 319, 999);
    /** HTTP statuses of a server or proxy that is overloaded or restarting, when the answer has no code. */
    static final Set<Integer> TRANSIENT_STATUSES = Set.of(429, 502, 503, 504);

    /**
     * Classifies a failed request.
     *
     * @param error what the {@link ClickHouseHttpClient} threw
     * @return the class of the failure
     */
    public static InsertErrorKind of(IOException error) {
        if (error instanceof TargetTable.RejectedTarget) {
            return PERMANENT;
        }
        if (error instanceof ClickHouseException ch) {
            if (ch.permanent()) {
                return PERMANENT;
            }
            if (TRANSIENT_CODES.contains(ch.code())
                    || (ch.code() < 0 && TRANSIENT_STATUSES.contains(ch.status()))) {
                return TRANSIENT;
            }
            return UNCLASSIFIED;
        }
        if (notSent(error) || error instanceof HttpTimeoutException) {
            return TRANSIENT;
        }
        return UNCLASSIFIED;
    }

    /**
     * Whether the request never reached the server: the connection was refused or could not be opened in time, so
     * no INSERT started. Every other failure may come after the server started the INSERT.
     *
     * @param error what the {@link ClickHouseHttpClient} threw
     * @return true if nothing was sent
     */
    public static boolean notSent(IOException error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException || t instanceof HttpConnectTimeoutException) {
                return true;
            }
        }
        return false;
    }
}
