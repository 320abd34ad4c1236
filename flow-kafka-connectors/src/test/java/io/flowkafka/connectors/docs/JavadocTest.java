package io.flowkafka.connectors.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.DocumentationTool;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Javadoc of this module's public packages builds with doclint on and without a warning (issue
 * 23): what {@code mvn javadoc:javadoc} would report with doclint {@value #DOCLINT} (as
 * the root pom), run by the JDK's javadoc tool in-process so that
 * {@code mvn verify} checks it without the javadoc plugin. Internal packages are left out, as in
 * the published Javadoc.
 *
 * <p>Doclint's {@code missing} group is on too: every public or protected class, constructor,
 * method, field and record component of the public packages has a comment, its {@code @param}s,
 * its {@code @return} and a {@code @throws} for each declared checked exception.
 */
class JavadocTest {
    /** The public packages of this module. */
    static final List<String> PUBLIC_PACKAGES = List.of("io.flowkafka.connectors.kafka",
            "io.flowkafka.connectors.registry", "io.flowkafka.connectors.statictable");

    /** Doclint's groups: all of them, the {@code missing} group included. */
    static final String DOCLINT = "all";

    @Test
    void shouldBuildPublicJavadocWithoutWarnings(@TempDir Path out) throws IOException {
        assertThat(javadocProblems(Path.of("src", "main", "java"), PUBLIC_PACKAGES, DOCLINT, out)).isEmpty();
    }

    /** Runs javadoc over {@code packages} and returns every warning and error, one per line. */
    static List<String> javadocProblems(Path sources, List<String> packages, String doclint, Path out)
            throws IOException {
        DocumentationTool tool = ToolProvider.getSystemDocumentationTool();
        assertThat(tool).as("the JDK's javadoc tool (run the build on a JDK, not a JRE)").isNotNull();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> options = new ArrayList<>(List.of("-d", out.toString(), "-sourcepath", sources.toString(),
                "-classpath", classpath, "-encoding", "UTF-8", "-Xdoclint:" + doclint, "-Xmaxwarns", "10000", "-quiet", "-notimestamp"));
        List<Path> sourceFiles = new ArrayList<>();
        for (String p : packages) {
            try (var listing = Files.list(sources.resolve(p.replace('.', File.separatorChar)))) {
                listing.filter(f -> f.toString().endsWith(".java")).sorted().forEach(sourceFiles::add);
            }
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StringWriter log = new StringWriter();
        try (StandardJavaFileManager files = tool.getStandardFileManager(diagnostics, Locale.ROOT,
                StandardCharsets.UTF_8)) {
            boolean ok = tool.getTask(log, files, diagnostics, null, options,
                    files.getJavaFileObjectsFromPaths(sourceFiles)).call();
            List<String> problems = new ArrayList<>();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() != Diagnostic.Kind.NOTE && d.getKind() != Diagnostic.Kind.OTHER) {
                    problems.add(d.getKind() + " " + (d.getSource() == null ? "" : d.getSource().getName() + ":"
                            + d.getLineNumber() + ": ") + d.getMessage(Locale.ROOT));
                }
            }
            for (String line : log.toString().split("\\R")) {
                if (line.contains("warning") || line.contains("error")) {
                    problems.add(line);
                }
            }
            if (!ok && problems.isEmpty()) {
                problems.add("javadoc failed: " + log);
            }
            Files.writeString(out.resolve("problems.txt"), String.join(File.separator.equals("/") ? "\n" : "\r\n",
                    problems));
            return problems;
        }
    }
}
