package io.flowkafka.connectors.registry;

import java.util.List;

/**
 * The answer of a compatibility check.
 *
 * @param compatible whether the schema may be registered under the subject
 * @param messages why not, as the registry words it; empty when compatible or when the registry
 *     gave no reasons
 */
public record CompatibilityResult(boolean compatible, List<String> messages) {
    /**
     * Copies the messages.
     *
     * @param compatible whether the schema may be registered under the subject
     * @param messages why not, as the registry words it; copied
     */
    public CompatibilityResult {
        messages = List.copyOf(messages);
    }
}
