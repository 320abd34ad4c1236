package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.status.StatusBoard;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.junit.jupiter.api.Test;

/**
 * The sentence a refused client gets (without a broker to ask, so from the table's rows alone), and the stream
 * thread it stops instead of replacing.
 */
class PrincipalAclsTest {
    private final PrincipalAcls acls = new PrincipalAcls("orders", "orders", "orders.", List.of("in"), List.of("out"),
            true, List.of("orders.outbox.web"));

    @Test
    void shouldNameTheTopicAndTheRowsOperationsWhenATopicIsRefused() {
        var e = new StreamsException("task 0_0 failed", new TopicAuthorizationException(Set.of("out")));

        assertThat(acls.explain(e, null)).startsWith("pipeline 'orders' stops: its principal lacks ACL Describe, "
                + "Write on topic 'out' (row sink topics: Describe, Write)").contains("Topics and ACLs");
    }

    @Test
    void shouldNameTheTopicKafkaStreamsCouldNotCreate() {
        var e = new StreamsException("Could not create topic orders-count.state-changelog.",
                new TopicAuthorizationException("Topic authorization failed."));

        assertThat(acls.explain(e, null)).contains("ACL Create on topic 'orders-count.state-changelog' (row topics "
                + "'orders-*': Create, Describe, Read, Write)");
    }

    @Test
    void shouldNameThePipelineTopicsRowWithDeleteForThePurge() {
        var e = new TopicAuthorizationException(Set.of("orders.events"));

        assertThat(acls.explain(e, null)).contains("on topic 'orders.events' (row topics 'orders.*': Create, "
                + "Describe, Read, Write, Delete)");
    }

    @Test
    void shouldNameTheGroupAndTheTransactionalIds() {
        assertThat(acls.explain(new StreamsException(new GroupAuthorizationException("Not authorized", "orders")),
                null)).contains("ACL Read, Describe on consumer group 'orders'");
        assertThat(acls.explain(new GroupAuthorizationException("Not authorized", "orders.outbox.web"), null))
                .contains("ACL Read, Describe on consumer group 'orders.outbox.web' (row group 'orders.outbox.web' "
                        + "(async sinks): Read, Describe)");
        assertThat(acls.explain(new KafkaException(new TransactionalIdAuthorizationException("denied")), null))
                .contains("ACL Describe, Write on transactional ids 'orders-*'");
    }

    @Test
    void shouldNameRefusedCredentialsWithoutRepeatingThem() {
        assertThat(acls.explain(new SaslAuthenticationException("Authentication failed during authentication due to "
                + "invalid credentials with SASL mechanism SCRAM-SHA-512"), null))
                .contains("Kafka refused its credentials").contains("sasl.jaas.config");
    }

    @Test
    void shouldLeaveOtherFailuresAlone() {
        assertThat(acls.explain(new StreamsException(new TimeoutException("commit")), null)).isNull();
    }

    @Test
    void shouldStopTheClientRatherThanReplaceARefusedThread() {
        StatusBoard board = new StatusBoard();
        var failures = new StreamThreadFailures("orders", board, true, acls, () -> null);

        assertThat(failures.handle(new StreamsException(new TransactionalIdAuthorizationException("denied"))))
                .isEqualTo(StreamThreadExceptionResponse.SHUTDOWN_CLIENT);
        assertThat(board.errors()).singleElement().satisfies(err ->
                assertThat(err.message()).contains("transactional ids 'orders-*'"));
        assertThat(failures.handle(new StreamsException(new TimeoutException("commit"))))
                .isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
    }
}
