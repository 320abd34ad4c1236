package io.flowkafka.testing;

import org.junit.jupiter.api.Timeout;

/** {@link ExternalStateLevelsContract} on the in-JVM broker. */
@FlowTestLevels(FlowTestLevel.BROKER)
@Timeout(180)
class ExternalStateLevelsIT extends ExternalStateLevelsContract {
}
