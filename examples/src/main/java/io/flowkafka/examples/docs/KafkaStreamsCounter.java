package io.flowkafka.examples.docs;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The activity counter ({@link io.flowkafka.examples.activity.ActivityCounter}) written with the
 * Kafka Streams Processor API, for the "coming from Kafka Streams" page: the input topic must be
 * keyed by user, and the store, its serdes and the topology are wired by hand.
 */
public final class KafkaStreamsCounter {
    private KafkaStreamsCounter() {
    }

    // tag::processor[]
    static final class CountProcessor implements Processor<String, String, String, Long> {
        private ProcessorContext<String, Long> context;
        private KeyValueStore<String, Long> totals;

        @Override
        public void init(ProcessorContext<String, Long> context) {
            this.context = context;
            this.totals = context.getStateStore("totals");
        }

        @Override
        public void process(Record<String, String> record) {
            Long previous = totals.get(record.key());
            long count = (previous == null ? 0 : previous) + 1;
            totals.put(record.key(), count);
            context.forward(record.withValue(count));
        }
    }

    /** Reads {@code input} (key = user), writes the running count per user to {@code output}. */
    public static Topology topology(String input, String output) {
        Topology topology = new Topology();
        topology.addSource("in", Serdes.String().deserializer(), Serdes.String().deserializer(), input);
        topology.addProcessor("count", CountProcessor::new, "in");
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("totals"),
                Serdes.String(), Serdes.Long()), "count");
        topology.addSink("out", output, Serdes.String().serializer(), Serdes.Long().serializer(), "count");
        return topology;
    }
    // end::processor[]
}
