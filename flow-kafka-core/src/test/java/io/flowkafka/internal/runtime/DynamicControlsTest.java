package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.spec.PipelineSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** The dynamic spec's {@code paused}: it pauses and resumes an instance, but never ends the application's own pause. */
class DynamicControlsTest {
    private static final Schema ROW = SchemaBuilder.record("Row").fields().requiredString("k").endRecord();

    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    /** A runtime's pause state and what was asked of it. */
    private static final class Runtime implements DynamicControls.Target {
        boolean paused;
        final List<String> calls = new ArrayList<>();

        @Override
        public boolean canAct() {
            return true;
        }

        @Override
        public boolean paused() {
            return paused;
        }

        @Override
        public void pause() {
            calls.add("pause");
            paused = true;
        }

        @Override
        public void resume() {
            calls.add("resume");
            paused = false;
        }

        @Override
        public void drainAndStop() {
            calls.add("stop");
        }
    }

    private static DynamicSpec dynamic() {
        return new DynamicSpec(PipelineSpec.builder("p").stream("rows", ROW)
                .computation("c", c -> c.inputStreamIds("rows").processingFunction(Noop::new)).build());
    }

    private static Map<String, Object> paused(Boolean value) {
        Map<String, Object> m = new HashMap<>();
        m.put("paused", value);
        return m;
    }

    @Test
    void shouldPauseAndResumeAsTheSpecSays() {
        DynamicSpec spec = dynamic();
        Runtime runtime = new Runtime();
        DynamicControls controls = new DynamicControls("p", spec, runtime);
        spec.apply(paused(true));
        controls.follow();
        spec.apply(paused(null));
        controls.follow();
        assertThat(runtime.calls).containsExactly("pause", "resume");
        assertThat(runtime.paused).isFalse();
    }

    @Test
    void shouldNotEndAPauseTheApplicationMadeItself() {
        DynamicSpec spec = dynamic();
        Runtime runtime = new Runtime();
        DynamicControls controls = new DynamicControls("p", spec, runtime);
        controls.applicationPause(() -> runtime.paused = true); // FlowRuntime.pause(), e.g. while a downstream
        // system is down
        spec.apply(paused(true)); // flow-kafka pause
        controls.follow();
        spec.apply(paused(null)); // flow-kafka resume
        controls.follow();
        assertThat(runtime.calls).as("the application's pause is its own to end").isEmpty();
        assertThat(runtime.paused).isTrue();
    }

    /** Operations audit: the application's resume ended a pause the dynamic spec still asked for. */
    @Test
    void shouldNotEndAPauseTheSpecMadeWhenTheApplicationResumes() {
        DynamicSpec spec = dynamic();
        Runtime runtime = new Runtime();
        DynamicControls controls = new DynamicControls("p", spec, runtime);
        controls.applicationPause(() -> runtime.paused = true); // FlowRuntime.pause()
        spec.apply(paused(true)); // flow-kafka pause, while the application's pause lasts
        controls.follow();

        assertThat(controls.applicationResume(() -> runtime.paused = false)).as("FlowRuntime.resume() leaves it "
                + "paused").isFalse();
        assertThat(runtime.paused).isTrue();
        spec.apply(paused(null)); // flow-kafka resume
        controls.follow();
        assertThat(runtime.calls).containsExactly("resume");
        assertThat(runtime.paused).isFalse();

        // and the other way round: the spec's pause alone, which the application's resume does not end either
        spec.apply(paused(true));
        controls.follow();
        assertThat(controls.applicationResume(() -> runtime.paused = false)).isFalse();
        assertThat(runtime.paused).isTrue();
    }
}
