package io.flowkafka.internal.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spec audit: a computation reading a keyed source has its keys where the topic's producer put them, not in the hash
 * ranges a state query routes by. Its queries were refused as those of "a Source computation", which it is not; the
 * answer now says why it is refused and what to query instead.
 */
class KeyedSourceStateQueryTest {
    private static final Schema EVENT = SchemaBuilder.record("E").namespace("kq").fields().requiredString("user")
            .endRecord();

    @TempDir
    Path stateDir;

    /** Counts nothing; the spec needs a function. */
    public static final class Nothing implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    @Test
    void shouldRefuseAStateQueryOfAComputationReadingAKeyedSource() throws Exception {
        PipelineSpec spec = PipelineSpec.builder("kq").stream("events", EVENT)
                .computation("count", c -> c.source("events", "KafkaSource", Map.of("topics", "in",
                                "key_partitioned", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("n", EVENT).processingFunction(Nothing::new))
                .build();
        Properties props = new Properties();
        props.put("bootstrap.servers", "unused:9092");
        props.put("state.dir", stateDir.toString());
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            server.createContext("/states", runtime.stateQueryHandler());
            server.start();
            URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/states?computation=count&key="
                    + URLEncoder.encode("{\"user\": \"a\"}", StandardCharsets.UTF_8));
            HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).isEqualTo(400);
            assertThat(answer.body()).contains("computation 'count' reads a keyed source",
                    "query a computation that reads an internal stream");
        } finally {
            server.stop(0);
        }
    }
}
