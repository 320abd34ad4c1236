package io.flowkafka.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test method once per {@link FlowTestLevel}: the same body on the unit harness, on
 * {@link FlowTestDriver} and on a real broker. The method takes a {@link FlowTestLevel} parameter
 * and opens its pipeline with {@link FlowTestLevel#open}; it may also take {@link TestNames},
 * distinct per level (build the spec's pipeline and topic names with them, which the broker level
 * needs). Each invocation is named after its level, e.g. {@code [DRIVER]}.
 *
 * <p>On a method, the annotation lists the levels where the test fits (all three by default; leave
 * {@link FlowTestLevel#HARNESS} out for a test of several computations). On a test class, or a
 * superclass of it, it restricts the methods of that class to the levels it lists: the usual
 * split puts the test body in an abstract class, extended by a {@code *Test} class annotated
 * {@code @FlowTestLevels({HARNESS, DRIVER})}, which surefire runs in milliseconds, and by a
 * {@code *IT} class annotated {@code @FlowTestLevels(BROKER)}, which failsafe runs in
 * {@code mvn verify}. A method left with no level runs nothing.
 *
 * <pre>{@code
 * abstract class WaitClickJoinAllLevels {
 *     @FlowTestLevels
 *     void shouldJoinClicksAndTimeOutTheRest(FlowTestLevel level, TestNames names) { ... }
 * }
 * @FlowTestLevels({FlowTestLevel.HARNESS, FlowTestLevel.DRIVER})
 * class WaitClickJoinAllLevelsTest extends WaitClickJoinAllLevels {}
 * @FlowTestLevels(FlowTestLevel.BROKER)
 * class WaitClickJoinAllLevelsIT extends WaitClickJoinAllLevels {}
 * }</pre>
 *
 * (compiled and run as {@code io.flowkafka.examples.waitclick.WaitClickJoinAllLevels}.) Do not
 * combine it with {@link WithKafka} on the same class: both would resolve {@link TestNames}; the
 * broker level uses the shared in-JVM broker itself.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@TestTemplate
@ExtendWith(FlowTestLevelsExtension.class)
public @interface FlowTestLevels {
    /**
     * The levels, in the order they run.
     *
     * @return the levels to run the test on
     */
    FlowTestLevel[] value() default {FlowTestLevel.HARNESS, FlowTestLevel.DRIVER, FlowTestLevel.BROKER};
}
