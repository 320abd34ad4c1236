package io.flowkafka.internal.dynamic;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One record of a pipeline's dynamic-spec topic: the WHOLE dynamic document in effect (the merge of every change so
 * far) and its version, one more than the document it was merged onto. The rule it keeps: versions only grow, so an
 * instance applies a document only if it is newer than the one it has.
 *
 * <p>As JSON: {@code {"version": 3, "dynamic_spec": {"computations": {...}}}}.
 *
 * @param version the version; 0 for the empty document before any change
 * @param spec the whole dynamic document, in the layout of {@code FlowRuntime.reconfigure}
 */
public record DynamicSpecDocument(long version, Map<String, Object> spec) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> TREE = new TypeReference<>() { };

    /** The document before any change: every setting has its static value. */
    public static final DynamicSpecDocument EMPTY = new DynamicSpecDocument(0, Map.of());

    /**
     * Checks the version.
     *
     * @throws IllegalArgumentException for a negative version
     */
    public DynamicSpecDocument {
        Objects.requireNonNull(spec, "spec");
        if (version < 0) {
            throw new IllegalArgumentException("version must be >= 0 but was " + version);
        }
    }

    /** The document as the topic holds it. */
    public byte[] toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("version", version);
        out.put("dynamic_spec", spec);
        try {
            return JSON.writeValueAsBytes(out);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the dynamic spec cannot be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Reads a record's value.
     *
     * @param value the record value
     * @return the document
     * @throws IllegalArgumentException if the value is not a document: not JSON, or without a non-negative integer
     *     {@code version} and an object {@code dynamic_spec}
     */
    public static DynamicSpecDocument fromJson(byte[] value) {
        Map<String, Object> tree;
        try {
            tree = JSON.readValue(value, TREE);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a JSON object: " + e.getMessage(), e);
        }
        if (tree == null || !(tree.get("version") instanceof Number v) || v instanceof Double || v instanceof Float
                || v.longValue() < 0) {
            throw new IllegalArgumentException("its \"version\" must be a non-negative integer but was "
                    + (tree == null ? null : tree.get("version")));
        }
        if (!(tree.get("dynamic_spec") instanceof Map<?, ?> spec)) {
            throw new IllegalArgumentException("its \"dynamic_spec\" must be an object but was " + tree.get("dynamic_spec"));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> typed = (Map<String, Object>) spec;
        return new DynamicSpecDocument(v.longValue(), typed);
    }
}
