package io.flowkafka.examples.waitclick;

import io.flowkafka.spec.PipelineSpec;

/**
 * Every test of {@link WaitClickJoinTest} on the keyed-source shape of the join
 * ({@link WaitClickJoin#keyedSpec}): the same inputs give the same results.
 */
class KeyedWaitClickJoinTest extends WaitClickJoinTest {
    @Override
    protected PipelineSpec spec() {
        return WaitClickJoin.keyedSpec("wcj", "impressions", "clicks", "results", false);
    }
}
