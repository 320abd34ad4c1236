package io.flowkafka.spi;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * What a sink's own dead letters share with the pipeline's: the header naming what a dead letter leaves out, and the
 * headers of a dead letter without its record's key, value and headers (for a record the dead-letter topic refused
 * whole, so the sink does not block on it).
 */
public final class SinkDeadLetters {
    /** The header naming what a dead letter leaves out of its input, and why. */
    public static final String OMITTED_HEADER = "flow.dlq.omitted";

    private SinkDeadLetters() {
    }

    /**
     * Only the {@code flow.dlq.*} headers of {@code headers}, and {@value #OMITTED_HEADER} saying {@code omitted}.
     *
     * @param headers a dead letter's headers: its input's, then the {@code flow.dlq.*} ones
     * @param omitted what is left out, and why
     * @return new headers
     */
    public static Headers bare(Headers headers, String omitted) {
        Headers bare = new RecordHeaders();
        for (Header h : headers) {
            if (h.key().startsWith("flow.dlq.")) {
                bare.add(h);
            }
        }
        bare.add(OMITTED_HEADER, omitted.getBytes(StandardCharsets.UTF_8));
        return bare;
    }
}
