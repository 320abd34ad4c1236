package io.flowkafka.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a JUnit 5 test class against the JVM-wide shared in-JVM Kafka broker.
 *
 * <p>Shorthand for {@code @ExtendWith(FlowKafkaExtension.class)}; see {@link FlowKafkaExtension}
 * for what is injected.
 *
 * <pre>{@code
 * @WithKafka
 * class ShouldCountIT {
 *     @Test
 *     void shouldCount(KafkaCluster cluster, TestNames names) {
 *         String input = names.topic("input");
 *         cluster.createTopic(input, 4);
 *     }
 * }
 * }</pre>
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@ExtendWith(FlowKafkaExtension.class)
public @interface WithKafka {}
