package io.flowkafka.examples.waitclick;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Seeded sample traffic for the wait-click join and the results it must give: impressions every
 * {@code spacingMs}, a share of them clicked after a random delay of up to 40 minutes (so some
 * clicks come too late), clicks in event-time order.
 *
 * @param impressions impression id to event time (ms)
 * @param clicks (impression id, click time ms) in event-time order
 */
public record WaitClickData(Map<String, Long> impressions, List<Map.Entry<String, Long>> clicks) {

    /** Generates {@code n} impressions, clicking a {@code clickRatio} share of them. */
    public static WaitClickData generate(int n, double clickRatio, long startMs, long spacingMs, long seed) {
        Random random = new Random(seed);
        Map<String, Long> impressions = new TreeMap<>();
        List<Map.Entry<String, Long>> clicks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = "imp-" + i;
            long ts = startMs + i * spacingMs;
            impressions.put(id, ts);
            if (random.nextDouble() < clickRatio) {
                clicks.add(Map.entry(id, ts + (long) (random.nextDouble() * 40 * 60_000L)));
            }
        }
        clicks.sort(Comparator.comparing(Map.Entry::getValue));
        return new WaitClickData(impressions, clicks);
    }

    /** The result each impression must get: {@code joined} when clicked within the wait, else {@code no_click}. */
    public Map<String, String> expectedResults() {
        Map<String, String> expected = new TreeMap<>();
        impressions.keySet().forEach(id -> expected.put(id, "no_click"));
        for (Map.Entry<String, Long> c : clicks) {
            if (WaitClickJoin.clickCounts(impressions.get(c.getKey()), c.getValue())) {
                expected.put(c.getKey(), "joined");
            }
        }
        return expected;
    }

    /** The JSON value of an impression. */
    public static String impressionJson(String id, long ts) {
        return "{\"impression_id\":\"" + id + "\",\"user\":\"user-" + (Math.abs(id.hashCode()) % 1000) + "\",\"ts\":" + ts + "}";
    }

    /** The JSON value of a click. */
    public static String clickJson(String id, long ts) {
        return "{\"impression_id\":\"" + id + "\",\"ts\":" + ts + "}";
    }
}
