package io.flowkafka.benchmarks.flink;

import java.io.IOException;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonFactory;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonParser;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonToken;

/** Parses the JSON value of an impression or a click with Jackson's streaming parser. */
public class EventDeserializer implements DeserializationSchema<Event> {
    private static final long serialVersionUID = 1L;
    private final boolean click;
    private transient JsonFactory json;

    public EventDeserializer(boolean click) {
        this.click = click;
    }

    @Override
    public Event deserialize(byte[] message) throws IOException {
        if (json == null) {
            json = new JsonFactory();
        }
        Event e = new Event();
        e.click = click;
        boolean hasTs = false;
        try (JsonParser p = json.createParser(message)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "impression_id" -> e.id = p.getText();
                    case "user" -> e.user = p.getText();
                    case "ts" -> {
                        e.ts = p.getLongValue();
                        hasTs = true;
                    }
                    default -> {
                        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                            p.skipChildren();
                        }
                    }
                }
            }
        }
        if (e.id == null || !hasTs || (!click && e.user == null)) {
            throw new IOException("missing field in " + new String(message, java.nio.charset.StandardCharsets.UTF_8));
        }
        return e;
    }

    @Override
    public boolean isEndOfStream(Event nextElement) {
        return false;
    }

    @Override
    public TypeInformation<Event> getProducedType() {
        return TypeInformation.of(Event.class);
    }
}
