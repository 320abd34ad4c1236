package io.flowkafka.testing;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.StreamSpec;
import io.flowkafka.spi.PunctuatedSource;
import io.flowkafka.spi.SourceProvider;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * A punctuated test source ({@code CountingSource}): emits {@code 0 .. count-1} ({@code count} parameter) as
 * {@code {"n"}} messages, {@code per_step} per punctuation (dynamic), its position in the task's progress. With
 * {@code report_at_start}, a reader that starts from zero reports a status error ({@code start}).
 */
public final class CountingSource implements SourceProvider, PunctuatedSource {
    /** For {@link java.util.ServiceLoader}. */
    public CountingSource() {
    }

    @Override
    public Set<String> sourceClassNames() {
        return Set.of("CountingSource");
    }

    @Override
    public Set<String> parameterNames(SourceSpec source) {
        return Set.of("count", "per_step", "report_at_start");
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream) {
        return List.of();
    }

    @Override
    public PunctuatedSource punctuated() {
        return this;
    }

    @Override
    public Set<String> dynamicParameterNames() {
        return Set.of("per_step");
    }

    @Override
    public Reader open(Context context) {
        long count = Long.parseLong(context.source().parameters().get("count").toString());
        boolean reportAtStart = Boolean.parseBoolean(String.valueOf(context.source().parameters().get("report_at_start")));
        return new Reader() {
            @Override
            public void step(long nowMs, Progress progress, Emitter emitter) {
                long perStep = Long.parseLong(context.dynamicParameters().get().get("per_step").toString());
                byte[] v = progress.get("next");
                long next = v == null ? 0 : ByteBuffer.wrap(v).getLong();
                if (reportAtStart && next == 0) {
                    context.status().report("start", "counting from zero");
                }
                for (long i = 0; i < perStep && next < count; i++, next++) {
                    GenericRecord r = new GenericData.Record(context.streamSchema());
                    r.put("n", next);
                    emitter.emit(r, nowMs, nowMs);
                }
                progress.put("next", ByteBuffer.allocate(8).putLong(next).array());
            }

            @Override
            public boolean done(Progress progress) {
                byte[] v = progress.get("next");
                return v != null && ByteBuffer.wrap(v).getLong() >= count;
            }
        };
    }
}
