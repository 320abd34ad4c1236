package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.internal.runtime.RuntimeStates;
import io.flowkafka.internal.runtime.StreamsProperties;
import io.flowkafka.runtime.FlowRuntime.State;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

/** drain() without a broker: its preconditions and how Kafka Streams' states map while draining. */
class FlowRuntimeDrainTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    /** Does nothing. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static FlowRuntime runtime(Properties extra) {
        PipelineSpec spec = PipelineSpec.builder("drain").stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)"))
                .build();
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:9");
        p.putAll(extra);
        return FlowRuntime.create(spec, p);
    }

    @Test
    void shouldLeaveTheGroupOnStopUnlessTheUserMadeItAStaticMember() {
        // FlowRuntimeIT shows what leaving does on a broker: the partitions move at once
        try (FlowRuntime r = runtime(new Properties())) {
            assertThat(StreamsProperties.leavesGroupOnClose(r.streamsProperties())).isTrue();
            assertThat(r.leavesGroupOnClose()).isTrue();
        }
        Properties stay = new Properties();
        stay.put("flow.leave.group.on.close", "false");
        try (FlowRuntime r = runtime(stay)) {
            assertThat(r.leavesGroupOnClose()).as("the user keeps Kafka Streams' behaviour").isFalse();
        }
        for (String key : List.of("group.instance.id", "consumer.group.instance.id", "main.consumer.group.instance.id")) {
            Properties p = new Properties();
            p.put(key, "instance-1");
            try (FlowRuntime r = runtime(p)) {
                assertThat(StreamsProperties.leavesGroupOnClose(r.streamsProperties())).as(key).isFalse();
                assertThat(r.leavesGroupOnClose()).as(key).isFalse();
            }
        }
        Properties blank = new Properties();
        blank.put("group.instance.id", " ");
        assertThat(StreamsProperties.leavesGroupOnClose(blank)).as("a blank id is no static membership").isTrue();
    }

    @Test
    void shouldRefuseToDrainARuntimeNotStarted() {
        try (FlowRuntime r = runtime(new Properties())) {
            assertThatThrownBy(() -> r.drain(Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not started");
            assertThat(r.state()).isEqualTo(State.CREATED);
        }
    }

    @Test
    void shouldRefuseToDrainWithTheStreamsGroupProtocol() {
        Properties p = new Properties();
        p.put("group.protocol", "streams");
        try (FlowRuntime r = runtime(p)) {
            assertThatThrownBy(() -> r.drain(Duration.ofSeconds(1))).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("group.protocol=classic");
        }
    }

    @Test
    void shouldStayDrainingThroughRebalancesAndEndWithShutdownOrError() {
        assertThat(RuntimeStates.next(State.DRAINING, KafkaStreams.State.REBALANCING, false, false)).isEqualTo(State.DRAINING);
        assertThat(RuntimeStates.next(State.DRAINING, KafkaStreams.State.RUNNING, false, false)).isEqualTo(State.DRAINING);
        assertThat(RuntimeStates.next(State.DRAINING, KafkaStreams.State.PENDING_SHUTDOWN, false, false)).isEqualTo(State.STOPPING);
        assertThat(RuntimeStates.next(State.DRAINING, KafkaStreams.State.NOT_RUNNING, false, false)).isEqualTo(State.STOPPED);
        assertThat(RuntimeStates.next(State.DRAINING, KafkaStreams.State.PENDING_ERROR, false, false)).isEqualTo(State.FAILED);
    }

    @Test
    void shouldLeaveStoppedToARunningStopOfTheRuntime() {
        // the runtime's stop closes its sinks after Kafka Streams: it says STOPPED once they are closed too
        assertThat(RuntimeStates.next(State.STOPPING, KafkaStreams.State.NOT_RUNNING, false, true))
                .isEqualTo(State.STOPPING);
        // Kafka Streams shutting down on its own (no stop of the runtime running) is stopped at once
        assertThat(RuntimeStates.next(State.STOPPING, KafkaStreams.State.NOT_RUNNING, false, false))
                .isEqualTo(State.STOPPED);
        assertThat(RuntimeStates.next(State.FAILED, KafkaStreams.State.NOT_RUNNING, false, false))
                .isEqualTo(State.STOPPED);
    }

    @Test
    void shouldMapOtherStatesAsBefore() {
        assertThat(RuntimeStates.next(State.RUNNING, KafkaStreams.State.REBALANCING, false, false)).isEqualTo(State.STARTING);
        assertThat(RuntimeStates.next(State.STARTING, KafkaStreams.State.RUNNING, true, false)).isEqualTo(State.PAUSED);
        assertThat(RuntimeStates.next(State.STOPPING, KafkaStreams.State.RUNNING, false, false)).isEqualTo(State.STOPPING);
        assertThat(RuntimeStates.next(State.STOPPING, KafkaStreams.State.NOT_RUNNING, false, false)).isEqualTo(State.STOPPED);
        assertThat(RuntimeStates.next(State.COMPLETED, KafkaStreams.State.REBALANCING, false, false)).isEqualTo(State.COMPLETED);
        assertThat(RuntimeStates.next(State.RUNNING, KafkaStreams.State.ERROR, false, false)).isEqualTo(State.FAILED);
    }
}
