package io.flowkafka.connectors.clickhouse;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** Sink contexts and outbox records of the non-batching ClickHouse sinks' unit tests: stream {@code events}. */
final class DirectSinkFixtures {
    private DirectSinkFixtures() {
    }

    static SinkContext context(String sinkClass, URI url, Map<String, Object> more, MeterRegistry meters) {
        Map<String, Object> params = new HashMap<>(Map.of("url", url.toString(), "table", "t"));
        params.putAll(more);
        SinkSpec sink = new SinkSpec("ch", sinkClass, List.of("events"), params);
        return new SinkContext("p", "app", "read", sink, Map.of(), Map.of(), meters, "p.dlq",
                Map.of("events", ClickHouseSinkMain.EVENT));
    }

    static OutboxRecord record(long offset, int i) {
        GenericRecord r = new GenericData.Record(ClickHouseSinkMain.EVENT);
        r.put("id", "e" + i);
        r.put("user", "u");
        r.put("n", (long) i);
        return new OutboxRecord(offset, MessageId.of(ByteBuffer.allocate(8).putLong(i).array()), null,
                JsonRecords.toJson(r), new RecordHeaders(), 0L);
    }
}
