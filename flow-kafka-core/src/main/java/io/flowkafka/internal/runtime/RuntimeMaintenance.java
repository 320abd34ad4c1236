package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.InternalTopicPurger;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.jspecify.annotations.Nullable;

/**
 * The background work of a started runtime: output-limit measurement, the completion watch and the internal-topic
 * purge on the slow thread, following watermark alignment on the fast one ({@link RuntimeSchedulers}). The rule it
 * keeps: its threads stop before the consumers they poll are closed; the Admin client they share is the caller's,
 * closed after {@link #shutdown}.
 *
 * <p>Threading: started and shut down by the thread that starts and stops the runtime.
 */
public final class RuntimeMaintenance {
    private final RuntimeSchedulers schedulers;
    private final CompletionWatch completion;
    private @Nullable AlignmentFollower alignment;

    private RuntimeMaintenance(RuntimeSchedulers schedulers, CompletionWatch completion) {
        this.schedulers = schedulers;
        this.completion = completion;
    }

    /**
     * Starts the slow thread's work: every 500 ms, output limits measured then completion checked; every
     * {@code purgeIntervalMs} (if positive), the internal topics purged up to the committed offsets.
     */
    public static RuntimeMaintenance start(String pipeline, CompiledPipeline compiled, String applicationId,
            Admin admin, OutputLimitMeter outputLimits, CompletionWatch completion, long purgeIntervalMs) {
        var schedulers = new RuntimeSchedulers(pipeline);
        schedulers.scheduleSlow("the output-limit measurement and completion check", () -> {
            outputLimits.measure(admin);
            completion.check(admin);
        }, 500, 500);
        if (purgeIntervalMs > 0 && !compiled.internalTopics().isEmpty()) {
            schedulers.scheduleSlow("the internal-topic purge", new InternalTopicPurger(admin, applicationId,
                    compiled.internalTopics().keySet()), purgeIntervalMs, purgeIntervalMs);
        }
        return new RuntimeMaintenance(schedulers, completion);
    }

    /**
     * Follows the other instances' members of this instance's {@code watermark_alignment} groups on the fast thread
     * (see {@link AlignmentFollower}).
     */
    public void followAlignment(String pipeline, CompiledPipeline compiled, String applicationId,
            Map<String, Object> client, boolean streamsGroupProtocol) {
        alignment = AlignmentFollower.start(pipeline, compiled, applicationId, client, streamsGroupProtocol, schedulers);
    }

    /** Stops both threads (waiting at most 5 s), then closes the consumers they polled. */
    public void shutdown() {
        schedulers.shutdown(Duration.ofSeconds(5));
        if (alignment != null) {
            alignment.close(); // the thread that polled it has stopped
            alignment = null;
        }
        completion.close();
    }
}
