package io.flowkafka.internal.config;

import java.util.Collection;
import org.jspecify.annotations.Nullable;

/**
 * The "did you mean" of every error about a name (a spec field, a stream, a {@code flow.*} key): the known name
 * nearest a misspelt one by edit distance, or none when nothing is near.
 */
public final class NearestName {
    private static final int MAX_SUGGESTION_DISTANCE = 2;

    private NearestName() {
    }

    /**
     * The candidate closest to {@code name} within edit distance 2 and shorter than {@code name}'s
     * length (so "x" suggests nothing), first on ties; null if none.
     */
    public static @Nullable String closest(String name, Collection<String> candidates) {
        String best = null;
        int bestDistance = MAX_SUGGESTION_DISTANCE + 1;
        for (String c : candidates) {
            int d = editDistance(name, c);
            if (d > 0 && d < bestDistance && d < name.length()) {
                best = c;
                bestDistance = d;
            }
        }
        return best;
    }

    public static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
