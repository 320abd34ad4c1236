package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowkafka.runtime.FlowRuntime;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The status page as a browser shows it (issue 27): one instance with its operations server, the page rendered by
 * headless Chromium (Debian's {@code chromium}, installed by {@code .ci/services}; the test skips without it). The
 * rendered DOM shows the computations, a row per partition and a measured number (so the page's JavaScript fetched
 * and rendered {@code /status.json}); the screenshot is a real PNG. With {@code -Dflow.docs.screenshot=true} it is
 * copied to {@code docs/images/status-page.png}.
 */
@WithKafka
@Timeout(240)
class StatusPageChromiumIT {
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final Duration CHROMIUM_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RENDER_BOUND = Duration.ofSeconds(120);
    /** The skeleton before the script ran is about 15 kB; the rendered page about 100 kB. */
    private static final long RENDERED_PNG_BYTES = 40_000;
    /** The module's working directory is flow-kafka-testing/. */
    private static final Path DOC_IMAGE = Path.of("..", "docs", "images", "status-page.png");

    @TempDir
    Path dir;

    private static String chromium() {
        for (String p : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!p.isEmpty() && Files.isExecutable(Path.of(p, "chromium"))) {
                return Path.of(p, "chromium").toString();
            }
        }
        return Files.isExecutable(Path.of("/usr/bin/chromium")) ? "/usr/bin/chromium" : null;
    }

    /** Runs chromium headless with {@code args} and returns its standard output. */
    private String run(String binary, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(binary, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--user-data-dir=" + dir.resolve("profile")));
        command.addAll(Arrays.asList(args));
        Path out = dir.resolve("chromium.out");
        Path err = dir.resolve("chromium.err");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(CHROMIUM_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within " + CHROMIUM_TIMEOUT + ": " + command);
        }
        assertThat(p.exitValue()).as("chromium exit; stderr: %s", Files.readString(err)).isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    private interface IoCall<T> {
        T call() throws Exception;
    }

    private static <T> T call(IoCall<T> c) {
        try {
            return c.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldRenderTheComputationsPartitionsAndMeasuredValuesInHeadlessChromium(KafkaCluster cluster,
            TestNames names) throws Exception {
        String binary = chromium();
        assumeTrue(binary != null, "chromium is not installed (not on PATH, no /usr/bin/chromium): run .ci/services "
                + "as root to install Debian's chromium");
        String pipeline = names.name("shop");
        String in = names.name("clicks");
        cluster.createTopic(in, 2);
        cluster.createTopic(names.name("counts"), 1);
        try (FlowRuntime runtime = StatusPagePipeline.start(cluster,
                StatusPagePipeline.spec(pipeline, in, names.name("counts")), dir, "a")) {
            StatusPagePipeline.sendClicks(cluster, in, 200);
            Await.until(BOUND, "every task reports its input lag, watermarks, pending timers and key-visitor progress", () -> {
                JsonNode view = StatusPagePipeline.getJson(runtime, "/status.json");
                if (view == null || StatusPagePipeline.tasks(view).size() != 4) {
                    return false;
                }
                for (JsonNode t : view.path("instances").get(0).path("tasks")) {
                    if (!t.path("input_lag").isNumber() || t.path("event_watermark_ms").isNull()
                            || t.path("computation").asText().equals("count")
                            && (!t.path("visitors").get(0).path("progress").isNumber()
                            || t.path("pending_timers").asLong() == 0)) {
                        return false;
                    }
                }
                return true;
            });
            String url = StatusPagePipeline.url(runtime, "/");

            // the page renders after its two fetches; on a loaded machine chromium may dump it before they
            // return, so it is asked again (bounded) until the script has rendered
            AtomicReference<String> rendered = new AtomicReference<>("");
            Await.until(RENDER_BOUND, "headless chromium shows the page rendered by its script", () -> {
                rendered.set(call(() -> run(binary, "--virtual-time-budget=8000", "--dump-dom", url)));
                return rendered.get().contains("data-computation=\"read\" data-partition=\"0\"");
            });
            String dom = rendered.get();

            assertThat(dom).contains("Computation read").contains("Computation count")
                    .contains("<h1>Pipeline <span id=\"pipeline\">" + pipeline + "</span></h1>")
                    .contains("1 live instance(s)");
            for (String c : List.of("read", "count")) {
                for (int p = 0; p < 2; p++) {
                    assertThat(dom).as("a row for %s partition %d", c, p)
                            .contains("data-computation=\"" + c + "\" data-partition=\"" + p + "\"");
                }
            }
            assertThat(Pattern.compile("<td class=\"lag\">[0-9][0-9,]*</td>").matcher(dom).find())
                    .as("a numeric input lag, rendered by the page's script from /status.json").isTrue();
            assertThat(dom).as("the graph drawn from /graph.json").contains("class=\"graph-node graph-computation\"")
                    .contains(">counts_out<");
            assertThat(dom).as("a progress bar of the key visitor").contains("audit <span class=\"bar\"");

            Path png = dir.resolve("status-page.png");
            // a rendered page (tables, graph, bars) compresses to far more than the bare "loading" skeleton
            Await.until(RENDER_BOUND, "headless chromium takes a screenshot of the rendered page", () -> {
                call(() -> run(binary, "--virtual-time-budget=8000", "--hide-scrollbars", "--window-size=1280,900",
                        "--screenshot=" + png, url));
                return Files.exists(png) && call(() -> Files.size(png)) > RENDERED_PNG_BYTES;
            });

            byte[] image = Files.readAllBytes(png);
            assertThat((long) image.length).as("a non-trivial screenshot").isGreaterThan(RENDERED_PNG_BYTES);
            assertThat(Arrays.copyOf(image, 8)).as("PNG signature")
                    .isEqualTo(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
            Files.copy(png, Path.of("target", "status-page.png"), StandardCopyOption.REPLACE_EXISTING);
            if (Boolean.getBoolean("flow.docs.screenshot")) {
                Files.createDirectories(DOC_IMAGE.getParent());
                Files.copy(png, DOC_IMAGE, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }
}
