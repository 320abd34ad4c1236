package io.flowkafka.connectors.http;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Map;
import java.util.Properties;

/**
 * Runs one instance of {@link HttpPipeline} in a child JVM until stopped or killed; with
 * {@code FLOW_IT_API_KEY} in its environment the sink also sends the secret header {@code X-Api-Key} from it.
 * Args: bootstrap pipeline input url tokenFile stateDir.
 */
public final class HttpSinkMain {
    private HttpSinkMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[5]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks and outbox partitions move after 10 s instead of 45 s
        props.put("consumer.session.timeout.ms", "10000");
        props.put("consumer.heartbeat.interval.ms", "2000");
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        Map<String, Object> parameters = HttpSinkIT.sinkParameters(args[3], args[4]);
        if (System.getenv(HttpSinkIT.API_KEY_VARIABLE) != null) { // a secret header from the environment as well
            parameters.put("secret_headers", Map.of("Authorization", Map.of("file", args[4]),
                    "X-Api-Key", Map.of("env", HttpSinkIT.API_KEY_VARIABLE)));
        }
        FlowRuntime runtime = FlowRuntime.create(HttpPipeline.spec(args[1], args[2], parameters), props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }

}
