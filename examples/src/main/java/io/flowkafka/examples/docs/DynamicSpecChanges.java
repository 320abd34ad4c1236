package io.flowkafka.examples.docs;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Map;

/**
 * The dynamic spec changes of docs/operations.md, as compiled code: a key-visitor stream's settings and a
 * computation's {@code skip_if_expression}, changed on a running pipeline through any one of its instances.
 */
public final class DynamicSpecChanges {
    private DynamicSpecChanges() {
    }

    /** Slows the {@code sweep} visitor of computation {@code auditor} down to one pass an hour. */
    public static void changeVisitor(FlowRuntime runtime) {
        runtime.reconfigure(Map.of("computations", Map.of("auditor", Map.of("key_visitor_streams",
                Map.of("sweep", Map.of("period", "1h", "finite", false))))));
        // shorthand for one key-visitor stream
        runtime.reconfigureKeyVisitor("auditor", "sweep", Map.of("max_scan_rows_per_iteration", 5000));
    }

    /** Makes computation {@code enrich} skip messages from country XX and those without a user id. */
    public static void skipMessages(FlowRuntime runtime) {
        runtime.reconfigure(Map.of("computations", Map.of("enrich",
                Map.of("skip_if_expression", "country = 'XX' or user.id is null"))));
    }
}
