/**
 * flow-kafka's test kit: a pipeline test driver, Kafka clusters for tests, a JUnit 5 extension, bounded waits, an
 * exactly-once checker, a child-JVM launcher and a schema-registry replay server.
 *
 * <p>Entry points:
 * <ul>
 *   <li>{@link io.flowkafka.testing.FlowTestDriver} runs a whole pipeline deterministically on
 *       {@code TopologyTestDriver}, no broker needed;</li>
 *   <li>{@link io.flowkafka.testing.WithKafka} on a test class injects the JVM-wide
 *       {@link io.flowkafka.testing.EmbeddedKafkaCluster#shared() shared} in-JVM broker and
 *       per-test {@link io.flowkafka.testing.TestNames};</li>
 *   <li>{@link io.flowkafka.testing.EmbeddedKafkaCluster} starts a KRaft broker in this JVM,
 *       {@link io.flowkafka.testing.ContainerKafkaCluster} one in Docker;</li>
 *   <li>{@link io.flowkafka.testing.Await} replaces {@code Thread.sleep} in tests;</li>
 *   <li>{@link io.flowkafka.testing.ExactlyOnceChecker} finds lost and duplicated messages in
 *       an output topic;</li>
 *   <li>{@link io.flowkafka.testing.ChildJvm} runs an application in a separate JVM that a test
 *       can kill;</li>
 *   <li>{@link io.flowkafka.testing.SchemaRegistryReplayServer} answers like a Confluent Schema
 *       Registry on 127.0.0.1 by replaying recorded request/response exchanges.</li>
 * </ul>
 */
@NullMarked
package io.flowkafka.testing;

import org.jspecify.annotations.NullMarked;
