package io.flowkafka.internal.processor;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;

/**
 * Keeps the rule that a state is set to a record of its declared schema: rows are encoded by field position, so a
 * record of another schema would be stored under the wrong fields or fail with an index error naming nothing. A
 * schema passes when its fields have the declared names in the declared order (properties such as
 * {@code avro.java.string} may differ); the last schema that passed is remembered, so a state's records cost one
 * reference comparison.
 */
final class StateRecordCheck {
    private final String computation;
    private final String state;
    private final Schema declared;
    private Schema passed;

    StateRecordCheck(String computation, String state, Schema declared) {
        this.computation = computation;
        this.state = state;
        this.declared = declared;
        this.passed = declared;
    }

    GenericRecord checked(GenericRecord record) {
        Schema schema = record.getSchema();
        if (schema == passed) {
            return record;
        }
        if (!sameFields(schema)) {
            throw new IllegalArgumentException("state '" + state + "' of computation '" + computation
                    + "' is declared with schema " + declared.getFullName() + " " + fieldNames(declared)
                    + ", but set() got a record of " + schema.getFullName() + " " + fieldNames(schema)
                    + "; build it with the state's newRecord()");
        }
        passed = schema;
        return record;
    }

    private boolean sameFields(Schema schema) {
        if (schema.getType() != Schema.Type.RECORD || schema.getFields().size() != declared.getFields().size()) {
            return false;
        }
        for (int i = 0; i < schema.getFields().size(); i++) {
            if (!schema.getFields().get(i).name().equals(declared.getFields().get(i).name())) {
                return false;
            }
        }
        return true;
    }

    private static String fieldNames(Schema schema) {
        return schema.getType() != Schema.Type.RECORD ? "(" + schema.getType() + ")"
                : schema.getFields().stream().map(Schema.Field::name).toList().toString();
    }
}
