package io.flowkafka.examples.docs;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Properties;

/**
 * The state-query snippet of docs/operations.md as compiled code: the {@code /states} handler on an HTTP server of
 * your own, at the address {@code application.server} names (with {@code flow.http.port} the runtime mounts it).
 */
final class StateQueryServer {
    private StateQueryServer() {
    }

    static FlowRuntime start(PipelineSpec spec, Properties props) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(8080), 0);
        FlowRuntime runtime = FlowRuntime.create(spec, props); // props has application.server=<this host>:8080
        server.createContext("/states", runtime.stateQueryHandler());
        server.start();
        runtime.start();
        return runtime;
    }
}
