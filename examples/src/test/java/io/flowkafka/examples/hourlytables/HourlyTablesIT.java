package io.flowkafka.examples.hourlytables;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableReader;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/** {@link HourlyTables} on a real broker, with 2-second tables of at most 100 rows: every view lands in one table. */
@WithKafka
class HourlyTablesIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(180)
    void shouldWriteEveryViewToOneTable(KafkaCluster cluster, TestNames names) throws Exception {
        String topic = names.topic("views");
        cluster.createTopic(topic, 2);
        Path tables = Files.createTempDirectory(tempRoot, "hourly").resolve("tables");
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "hourly-state").toString());
        props.put("commit.interval.ms", "100");
        props.put("flow.sink.hourly.tick.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(HourlyTables.spec(names.name("hourly"), topic, tables.toString(),
                "2s", "1h", 100), props)) {
            runtime.start();
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < 500; i++) {
                    producer.send(new ProducerRecord<>(topic, "u" + (i % 7),
                            "{\"user\":\"u" + (i % 7) + "\",\"url\":\"/p" + i + "\",\"bytes\":" + i + "}"));
                }
            }
            Await.until(Duration.ofMinutes(2), "500 views in tables", () -> urls(tables).size() >= 500);
            List<String> urls = urls(tables);
            assertThat(urls).hasSize(500).doesNotHaveDuplicates();
        }
    }

    private static List<String> urls(Path tables) {
        try {
            LocalTablesDirectory dir = LocalTablesDirectory.open(tables);
            List<String> urls = new ArrayList<>();
            for (String t : dir.tableNames()) {
                StaticTableReader.open(dir, t).readAll().forEach(r -> urls.add(r.get("url").toString()));
            }
            return urls;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
