package io.flowkafka.internal.skip;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.StreamSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * The current {@code skip_if_expression} of one computation, changed by the dynamic spec and read by the
 * computation's tasks once per input message: a volatile read, so a change applies from the next message on.
 * It also compiles a new value against the computation's input payload schemas.
 *
 * <p>Threading: {@link #set} from any thread, {@link #current} from stream threads.
 */
public final class SkipSetting {
    private final String computation;
    private final boolean readsMessages;
    /** The payload schemas of the computation's inputs; null when one is unknown (a user serde without a schema). */
    private final @Nullable List<Schema> payloadSchemas;
    private volatile @Nullable SkipExpression current;

    private SkipSetting(String computation, boolean readsMessages,
            @Nullable List<Schema> payloadSchemas) {
        this.computation = computation;
        this.readsMessages = readsMessages;
        this.payloadSchemas = payloadSchemas;
    }

    /** The setting of {@code computation}, empty at first. */
    public static SkipSetting of(ComputationSpec computation, PipelineSpec spec) {
        List<String> streams = new ArrayList<>(computation.inputStreamIds());
        computation.sourceStreams().stream().map(SourceSpec::streamId).forEach(streams::add);
        List<Schema> schemas = new ArrayList<>();
        for (String s : streams) {
            StreamSpec stream = spec.streams().get(s);
            if (stream == null || stream.schema() == null) {
                return new SkipSetting(computation.id(), true, null);
            }
            schemas.add(stream.schema());
        }
        return new SkipSetting(computation.id(), !streams.isEmpty(), List.copyOf(schemas));
    }

    /** The expression in force, or null: nothing is skipped. */
    public @Nullable SkipExpression current() {
        return current;
    }

    /** Puts {@code expression} in force; null removes it. */
    public void set(@Nullable SkipExpression expression) {
        this.current = expression;
    }

    /**
     * Compiles a value of the dynamic spec: a string, or null or a blank string to remove the expression.
     *
     * @return the expression, or null to remove it
     * @throws IllegalArgumentException with a message starting {@code skip_if_expression}, naming the position
     *     and what was expected, an unknown payload field (listing those that exist), a value that is not a string,
     *     or a computation that reads no messages
     */
    public @Nullable SkipExpression compile(@Nullable Object value) {
        if (value == null || value instanceof String s && s.isBlank()) {
            return null;
        }
        if (!(value instanceof String text)) {
            throw new IllegalArgumentException("skip_if_expression must be a string such as \"country = 'US'\", or "
                    + "null or \"\" to remove it, but was " + value);
        }
        if (!readsMessages) {
            throw new IllegalArgumentException("skip_if_expression: computation '" + computation + "' reads no input "
                    + "or source stream, so there is no message to skip; remove the setting");
        }
        SkipExpression e = SkipExpression.parse(text);
        if (payloadSchemas != null) {
            e.checkFields(payloadSchemas);
        }
        return e;
    }
}
