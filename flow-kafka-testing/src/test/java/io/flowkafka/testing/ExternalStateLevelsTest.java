package io.flowkafka.testing;

/** {@link ExternalStateLevelsContract} on the harness and the driver. */
@FlowTestLevels({FlowTestLevel.HARNESS, FlowTestLevel.DRIVER})
class ExternalStateLevelsTest extends ExternalStateLevelsContract {
}
