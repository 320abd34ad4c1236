package io.flowkafka.connectors.clickhouse;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real ClickHouse server (with ZooKeeper, for ReplicatedMergeTree) the ClickHouse tests run against: the one
 * {@code .ci/services} started, found by {@code FLOW_CLICKHOUSE_URL} or the {@code target/services.env} it wrote; when
 * neither answers, {@code .ci/services} is run without installing anything. A test without a server is skipped with
 * the command that installs and starts one.
 */
final class ClickHouseTestServer {
    private static URI url;
    private static URI url2;
    private static boolean tried;

    private ClickHouseTestServer() {
    }

    /** The server's HTTP interface; skips the calling test when there is none. */
    static synchronized URI url() {
        if (!tried) {
            tried = true;
            url = find("FLOW_CLICKHOUSE_URL");
            if (url == null) {
                Path script = repoRoot().resolve(".ci/services");
                if (Files.isExecutable(script)) {
                    try {
                        ProcessBuilder b = new ProcessBuilder(script.toString()).redirectErrorStream(true)
                                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
                        b.environment().put("FLOW_SERVICES_NO_INSTALL", "1");
                        Process p = b.start();
                        if (p.waitFor(120, TimeUnit.SECONDS)) {
                            url = find("FLOW_CLICKHOUSE_URL");
                        } else {
                            p.destroy();
                        }
                    } catch (IOException e) {
                        // skipped below
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }
        if (url != null) {
            url2 = find("FLOW_CLICKHOUSE_URL2");
        }
        assumeTrue(url != null, "no ClickHouse server: run .ci/services (as root: it apt-get installs "
                + "clickhouse-server and zookeeper and starts them on loopback) or set FLOW_CLICKHOUSE_URL");
        return url;
    }

    /** The second server's HTTP interface (shard 02 of the sharded sink's IT); skips the test when there is none. */
    static synchronized URI url2() {
        url();
        assumeTrue(url2 != null, "no second ClickHouse server (shard 02): run .ci/services, which starts two");
        return url2;
    }

    /** A client of the server. */
    static ClickHouseHttpClient client() {
        return new ClickHouseHttpClient(url(), null, null, Duration.ofSeconds(30));
    }

    private static URI find(String key) {
        String env = System.getenv(key);
        if (env != null && answers(URI.create(env))) {
            return URI.create(env);
        }
        Path file = repoRoot().resolve("target/services.env");
        if (Files.isRegularFile(file)) {
            try {
                for (String line : Files.readAllLines(file)) {
                    if (line.startsWith(key + "=")) {
                        URI u = URI.create(line.substring(key.length() + 1).trim());
                        if (answers(u)) {
                            return u;
                        }
                    }
                }
            } catch (IOException e) {
                return null;
            }
        }
        return null;
    }

    private static boolean answers(URI u) {
        try (ClickHouseHttpClient c = new ClickHouseHttpClient(u, null, null, Duration.ofSeconds(3))) {
            return "1".equals(c.query("SELECT 1").strip());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static Path repoRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isDirectory(d.resolve(".ci"))) {
                return d;
            }
        }
        return dir;
    }

    /** Creates a ReplicatedMergeTree table of the given columns with a unique ZooKeeper path. */
    static void createReplicated(ClickHouseHttpClient c, String table, String columns) throws IOException {
        c.query("DROP TABLE IF EXISTS default." + table);
        c.query("CREATE TABLE default." + table + " (" + columns + ") ENGINE = ReplicatedMergeTree("
                + "'/clickhouse/tables/{shard}/" + table + "_" + System.nanoTime() + "', '{replica}') ORDER BY tuple()");
    }

    static List<String> lines(ClickHouseHttpClient c, String sql) throws IOException {
        String out = c.query(sql).strip();
        return out.isEmpty() ? List.of() : List.of(out.split("\n"));
    }
}
