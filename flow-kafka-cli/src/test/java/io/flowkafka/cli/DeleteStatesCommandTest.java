package io.flowkafka.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code delete-states} against a stand-in of an instance's {@code /states} (helper audit): it checks the pipeline
 * before it deletes, and a failed delete is a failure, not a fresh read with exit 0.
 */
class DeleteStatesCommandTest {
    private HttpServer server;
    private final List<String> methods = new CopyOnWriteArrayList<>();
    private volatile String pipeline = "p";
    private volatile int deleteStatus = 503;

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("localhost", 0), 0);
        server.createContext("/states", this::answer);
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    private void answer(HttpExchange exchange) throws IOException {
        methods.add(exchange.getRequestMethod());
        int status = 200;
        String body = "{\"pipeline\": \"" + pipeline + "\", \"computation\": \"count\", \"key\": {\"user\": \"a\"}, "
                + "\"partition\": 0, \"instance\": \"x:1\", \"states\": {\"count\": {\"n\": 3}}, \"deleted_rows\": 1}";
        if (exchange.getRequestMethod().equals("DELETE") && deleteStatus != 200) {
            status = deleteStatus;
            body = "{\"error\": \"the owner's task did not commit the delete within 30 s\"}";
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    private int deleteStates(StringWriter err) {
        return FlowKafkaCli.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "delete-states",
                "-p", "p", "-c", "count", "-k", "{\"user\": \"a\"}",
                "-i", "localhost:" + server.getAddress().getPort(), "--no-dry-run");
    }

    @Test
    void shouldFailWhenTheDeleteFails() {
        StringWriter err = new StringWriter();
        assertThat(deleteStates(err)).isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("answered 503 to the delete")
                .contains("did not commit the delete within 30 s").contains("read-states tells what is left");
        assertThat(methods).containsExactly("GET", "DELETE");
    }

    @Test
    void shouldDeleteNothingFromAnotherPipeline() {
        pipeline = "other";
        deleteStatus = 200;
        StringWriter err = new StringWriter();
        assertThat(deleteStates(err)).isEqualTo(FlowKafkaCli.FAILED);
        assertThat(err.toString()).contains("runs pipeline 'other', not 'p'");
        assertThat(methods).doesNotContain("DELETE");
    }
}
