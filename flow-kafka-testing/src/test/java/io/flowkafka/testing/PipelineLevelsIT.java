package io.flowkafka.testing;

import org.junit.jupiter.api.Timeout;

/** {@link PipelineLevelsContract} on the in-JVM broker. */
@FlowTestLevels(FlowTestLevel.BROKER)
@Timeout(180)
class PipelineLevelsIT extends PipelineLevelsContract {
}
