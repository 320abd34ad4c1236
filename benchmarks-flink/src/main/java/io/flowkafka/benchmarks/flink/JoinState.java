package io.flowkafka.benchmarks.flink;

/**
 * Per impression id: what has been seen so far. The same fields as {@code WaitClickJoin.JOIN_STATE}
 * (user, impression_ts, click_ts, joined), as a Flink POJO kept in RocksDB.
 */
public class JoinState {
    public String user;
    public Long impressionTs;
    public Long clickTs;
    public boolean joined;

    public JoinState() {
    }
}
