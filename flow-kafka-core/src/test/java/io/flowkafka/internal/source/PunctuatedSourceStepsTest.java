package io.flowkafka.internal.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.spi.PunctuatedSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class PunctuatedSourceStepsTest {
    private static final Schema ROW = SchemaBuilder.record("R").fields().requiredLong("n").endRecord();
    private static final int ORIGIN = 7;

    /** A progress that counts its writes. */
    private static final class CountingProgress implements PunctuatedSource.Progress {
        final Map<String, byte[]> values = new HashMap<>();
        final Map<String, Integer> puts = new HashMap<>();

        @Override
        public byte @Nullable [] get(String key) {
            return values.get(key);
        }

        @Override
        public void put(String key, byte[] value) {
            values.put(key, value);
            puts.merge(key, 1, Integer::sum);
        }
    }

    /** Emits {@code perStep} rows a step, {@code total} in all; ready while rows are left. */
    private static final class Counting implements PunctuatedSource.Reader {
        final int perStep;
        final long total;
        int steps;
        long emitted;

        Counting(int perStep, long total) {
            this.perStep = perStep;
            this.total = total;
        }

        @Override
        public void step(long nowMs, PunctuatedSource.Progress progress, PunctuatedSource.Emitter emitter) {
            steps++;
            for (int i = 0; i < perStep && emitted < total; i++) {
                GenericRecord r = new GenericData.Record(ROW);
                r.put("n", emitted++);
                emitter.emit(r, nowMs, nowMs);
            }
        }

        @Override
        public boolean ready() {
            return emitted < total;
        }

        @Override
        public boolean done(PunctuatedSource.Progress progress) {
            return emitted >= total;
        }
    }

    @Test
    void shouldStepOncePerPunctuationWithoutATimeBound() {
        CountingProgress progress = new CountingProgress();
        Counting reader = new Counting(3, 100);
        List<MessageId> ids = new ArrayList<>();
        PunctuatedSourceSteps steps = new PunctuatedSourceSteps(() -> 0L, 0);
        steps.add(ORIGIN, reader, progress, (id, payload, ts, wm) -> ids.add(id));

        steps.punctuate(true);

        assertThat(reader.steps).isEqualTo(1);
        assertThat(ids).containsExactly(MessageIds.source(ORIGIN, 0), MessageIds.source(ORIGIN, 1),
                MessageIds.source(ORIGIN, 2));
    }

    @Test
    void shouldStepAReadyReaderAgainWithinTheTimeBoundAndWriteTheCounterOnce() {
        CountingProgress progress = new CountingProgress();
        Counting reader = new Counting(3, 30);
        List<MessageId> ids = new ArrayList<>();
        PunctuatedSourceSteps steps = new PunctuatedSourceSteps(() -> 0L, 60_000);
        steps.add(ORIGIN, reader, progress, (id, payload, ts, wm) -> ids.add(id));

        steps.punctuate(true);

        assertThat(reader.steps).isEqualTo(10);
        assertThat(ids).hasSize(30).last().isEqualTo(MessageIds.source(ORIGIN, 29));
        assertThat(progress.puts).containsEntry(PunctuatedSourceSteps.EMITTED, 1);
    }

    @Test
    void shouldNumberOnFromTheStoredCounterAsAReplayedStepWould() {
        CountingProgress progress = new CountingProgress();
        List<MessageId> ids = new ArrayList<>();
        PunctuatedSourceSteps first = new PunctuatedSourceSteps(() -> 0L, 0);
        first.add(ORIGIN, new Counting(2, 100), progress, (id, payload, ts, wm) -> ids.add(id));
        first.punctuate(true);
        PunctuatedSourceSteps revived = new PunctuatedSourceSteps(() -> 0L, 0); // a new task over the same progress
        revived.add(ORIGIN, new Counting(2, 100), progress, (id, payload, ts, wm) -> ids.add(id));

        revived.punctuate(true);

        assertThat(ids).containsExactly(MessageIds.source(ORIGIN, 0), MessageIds.source(ORIGIN, 1),
                MessageIds.source(ORIGIN, 2), MessageIds.source(ORIGIN, 3));
    }

    @Test
    void shouldStepOnlyReadyReadersOnAQuickPunctuationAndWriteNoCounterWithoutMessages() {
        CountingProgress progress = new CountingProgress();
        Counting idle = new Counting(1, 0);
        PunctuatedSourceSteps steps = new PunctuatedSourceSteps(() -> 0L, 60_000);
        steps.add(ORIGIN, idle, progress, (id, payload, ts, wm) -> { });

        steps.punctuate(false);

        assertThat(steps.anyReady()).isFalse();
        assertThat(idle.steps).isZero();
        assertThat(progress.puts).doesNotContainKey(PunctuatedSourceSteps.EMITTED);
    }
}
