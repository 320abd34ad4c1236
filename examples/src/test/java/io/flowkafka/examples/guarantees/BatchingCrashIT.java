package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * SwiftMap batching ({@code allow_batching_with_relaxed_guarantees}) under SIGKILL, on a real broker. The docs
 * (processing-modes-and-batching.md): "the buffer and the input offsets commit together, and an aborted attempt's
 * outputs are never read, so each parent's content reaches downstream exactly once even when a replay cuts its
 * batches differently." Two instances collapse 30k messages into per-user batch outputs listing their input ids; one
 * is killed mid-stream while batches wait in its buffers, and restarted. Read read_committed, every input id is in
 * exactly one output (read_uncommitted, a run showed an id twice: the check has teeth).
 */
@WithKafka
class BatchingCrashIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int MESSAGES = 30_000;
    private static final long SEED = Long.getLong("flow.it.seed", 20261207L);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    @Timeout(600)
    void shouldPassEachParentsContentDownstreamOnceWhenAnInstanceIsKilledMidBatch(KafkaCluster cluster,
            TestNames names) throws Exception {
        long killAt = 5_000 + new Random(SEED).nextInt(15_000);
        try (CrashTestRun run = new CrashTestRun(cluster, "batching", names.name("batching"), names.topic("input"),
                names.topic("output"), Files.createTempDirectory(tempRoot, "batching"), BatchingCrashIT::ids);
                ChildJvm a = run.instance("a");
                ChildJvm b = run.instance("b")) {
            run.produce(MESSAGES, 300, SEED + 1);
            Await.until(Duration.ofMinutes(3), killAt + " ids in committed outputs", () -> run.read() >= killAt);
            a.kill(); // SIGKILL: its buffered batches and its open transaction die with it
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = run.instance("a2")) {
                Await.until(Duration.ofMinutes(3), "all " + MESSAGES + " ids in committed outputs",
                        () -> run.read() >= MESSAGES);
                run.readQuietWindow(Duration.ofSeconds(2));
            }
            assertThat(run.seen()).as("distinct ids").hasSize(MESSAGES);
            assertThat(run.repeated()).as("ids in more than one output").isEmpty();
        }
    }

    /** The input ids a collapsed output lists. */
    private static List<String> ids(ConsumerRecord<byte[], byte[]> r) {
        try {
            return List.of(JSON.readTree(r.value()).get("ids").asText().split(" "));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
