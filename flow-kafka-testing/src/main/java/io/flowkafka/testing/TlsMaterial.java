package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A broker's TLS key and the clients' trust in it, made for a test by the JDK's {@code keytool}: a self-signed
 * RSA certificate for {@code localhost} and {@code 127.0.0.1} (valid two days) in a PKCS12 key store, and a PKCS12
 * trust store holding that certificate. Used by {@link SecureKafkaCluster}; the files live in a directory of their
 * own that the owner deletes.
 *
 * @param keyStore the broker's key store
 * @param trustStore the clients' trust store
 * @param password the password of both stores
 */
record TlsMaterial(Path keyStore, Path trustStore, String password) {
    private static final long KEYTOOL_BOUND_S = 60;

    /** Makes the stores in {@code dir}. */
    static TlsMaterial create(Path dir) {
        String password = "tls-" + UUID.randomUUID();
        Path keyStore = dir.resolve("broker.p12");
        Path cert = dir.resolve("broker.crt");
        Path trustStore = dir.resolve("trust.p12");
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12",
                "-keystore", keyStore.toString(), "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-alias", "broker", "-keystore", keyStore.toString(), "-storepass", password,
                "-rfc", "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "broker", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", trustStore.toString(), "-storepass", password);
        return new TlsMaterial(keyStore, trustStore, password);
    }

    private static void keytool(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!p.waitFor(KEYTOOL_BOUND_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new FlowException("keytool " + args[0] + " did not finish within " + KEYTOOL_BOUND_S + " s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new FlowException("keytool " + args[0] + " failed (exit " + p.exitValue() + "): " + out.strip());
            }
        } catch (IOException e) {
            throw new FlowException("cannot run keytool " + args[0] + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while keytool " + args[0] + " ran", e);
        }
    }

    /** Deletes the stores and their directory. */
    void delete() {
        try {
            for (Path f : List.of(keyStore, trustStore, keyStore.resolveSibling("broker.crt"))) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(keyStore.getParent());
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }
}
