package io.flowkafka.benchmarks.flink;

/**
 * An impression ({@code click == false}: {@code {"impression_id", "user", "ts"}}) or a click
 * ({@code {"impression_id", "ts"}}), as read from the wait-click input topics. A Flink POJO: public
 * no-argument constructor and public fields, so Flink serializes it without Kryo.
 */
public class Event {
    public boolean click;
    public String id;
    public String user;
    public long ts;

    public Event() {
    }

    public Event(boolean click, String id, String user, long ts) {
        this.click = click;
        this.id = id;
        this.user = user;
        this.ts = ts;
    }

    @Override
    public String toString() {
        return (click ? "click " : "impression ") + id + "@" + ts;
    }
}
