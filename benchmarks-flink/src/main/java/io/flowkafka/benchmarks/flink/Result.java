package io.flowkafka.benchmarks.flink;

/** One result per impression: {@code joined} or {@code no_click}; the fields of {@code WaitClickJoin.RESULT}. */
public class Result {
    public String impressionId;
    public String user;
    public String result;
    public long impressionTs;
    public Long clickTs;

    public Result() {
    }

    public Result(String impressionId, String user, String result, long impressionTs, Long clickTs) {
        this.impressionId = impressionId;
        this.user = user;
        this.result = result;
        this.impressionTs = impressionTs;
        this.clickTs = clickTs;
    }

    /** The JSON value flow-kafka's KafkaSink writes for the same record. */
    public String toJson() {
        StringBuilder b = new StringBuilder(128);
        b.append("{\"impression_id\":");
        quote(b, impressionId);
        b.append(",\"user\":");
        quote(b, user);
        b.append(",\"result\":");
        quote(b, result);
        b.append(",\"impression_ts\":").append(impressionTs);
        b.append(",\"click_ts\":").append(clickTs == null ? "null" : clickTs.toString());
        return b.append('}').toString();
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        b.append('"');
    }
}
