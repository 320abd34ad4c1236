package io.flowkafka.examples.waitclick;

import io.flowkafka.testing.FlowTestLevel;
import io.flowkafka.testing.FlowTestLevels;

/** {@link WaitClickJoinAllLevels} on the unit harness and on FlowTestDriver (surefire). */
@FlowTestLevels({FlowTestLevel.HARNESS, FlowTestLevel.DRIVER})
class WaitClickJoinAllLevelsTest extends WaitClickJoinAllLevels {
}
