package io.flowkafka.internal.visitor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * {@link VisitRateEstimator} against reference 000, "Scheduled visit rate": each test quotes the rule it checks.
 */
class VisitRateEstimatorTest {
    private static final long S = 1_000_000_000L;
    private static final long T0 = 1_000 * S;

    @Test
    void shouldEstimateFromCumulativeCountsBeforeTheWindowMatures() {
        // "Before the window matures, the ratio of cumulative counts and coverage provides an initial estimate."
        VisitRateEstimator e = new VisitRateEstimator();
        e.observe(T0, 10, 0.1);
        e.observe(T0 + S, 30, 0.1);
        assertThat(e.estimatedKeys()).isCloseTo(200.0, within(1e-9));
        // "the rate required to visit all matching keys within period: estimated distinct key count divided by the
        // period in seconds"
        assertThat(e.requiredRate(10 * S)).isCloseTo(20.0, within(1e-9));
    }

    @Test
    void shouldLetEmptyReadsLowerTheDensity() {
        // "Empty reads contribute coverage with zero keys and can lower the estimated density"
        VisitRateEstimator e = new VisitRateEstimator();
        e.observe(T0, 40, 0.2);
        e.observe(T0 + S, 0, 0.2);
        assertThat(e.estimatedKeys()).isCloseTo(100.0, within(1e-9));
    }

    @Test
    void shouldKeepTheEstimateWithoutNewReads() {
        // "With no new reads, including while the buffer is full, the estimate stays unchanged."
        VisitRateEstimator e = new VisitRateEstimator();
        e.observe(T0, 50, 0.5);
        double before = e.estimatedKeys();
        assertThat(e.estimatedKeys()).isEqualTo(before);
        assertThat(e.requiredRate(60 * S)).isEqualTo(before / 60);
    }

    @Test
    void shouldHaveNoRateWithoutPositiveCoverage() {
        // "Without positive hash coverage, the rate is absent; this includes ranges with identical hash values at
        // both boundaries"
        VisitRateEstimator e = new VisitRateEstimator();
        assertThat(e.requiredRate(60 * S)).isNaN();
        e.observe(T0, 5, 0.0);
        assertThat(e.estimatedKeys()).isNaN();
        assertThat(e.requiredRate(60 * S)).isNaN();
    }

    @Test
    void shouldFollowTheRecentDensityOnceTheThirtySecondWindowMatured() {
        // "smoothed key count divided by smoothed hash coverage ... Both counters use the same observation timestamps
        // and a 30-second EMA window"; "The counters are not reset between passes."
        VisitRateEstimator e = new VisitRateEstimator();
        for (int s = 0; s <= 30; s++) {
            e.observe(T0 + s * S, 10, 0.1); // density 100 for the first 30 s
        }
        for (int s = 31; s <= 120; s++) {
            e.observe(T0 + s * S, 100, 0.1); // then 1,000
        }
        double cumulative = (31 * 10 + 90 * 100) / (121 * 0.1);
        assertThat(e.estimatedKeys()).as("the EMA follows the recent density, not the cumulative ratio %s", cumulative)
                .isGreaterThan(cumulative).isCloseTo(1_000.0, within(100.0));
    }

    @Test
    void shouldGiveZeroOnceFinished() {
        // "Once the finite visitor becomes Empty, its New and Offered rates are zero."
        VisitRateEstimator e = new VisitRateEstimator();
        e.observe(T0, 10, 0.1);
        e.finished();
        assertThat(e.requiredRate(60 * S)).isZero();
    }
}
