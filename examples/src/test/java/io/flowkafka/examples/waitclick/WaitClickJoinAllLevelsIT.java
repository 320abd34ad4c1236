package io.flowkafka.examples.waitclick;

import io.flowkafka.testing.FlowTestLevel;
import io.flowkafka.testing.FlowTestLevels;
import org.junit.jupiter.api.Timeout;

/** {@link WaitClickJoinAllLevels} on the in-JVM broker (failsafe). */
@FlowTestLevels(FlowTestLevel.BROKER)
@Timeout(180)
class WaitClickJoinAllLevelsIT extends WaitClickJoinAllLevels {
}
