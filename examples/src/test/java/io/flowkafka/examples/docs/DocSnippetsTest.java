package io.flowkafka.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Keeps the docs from drifting: every {@code ```java} block in {@code README.md} and {@code docs/**.md}
 * must be preceded by {@code <!-- snippet: examples/src/.../File.java -->} and be a contiguous excerpt
 * of that file, compared line by line without leading and trailing blanks. A line {@code ...} (or
 * {@code // ...}) in a block elides source lines: the parts on each side must appear in the file, in
 * that order.
 */
class DocSnippetsTest {
    /** The repository root, seen from the examples module's working directory. */
    static final Path ROOT = Path.of("..");
    private static final Pattern SOURCE = Pattern.compile("^<!--\\s*snippet:\\s*(\\S+)\\s*-->$");

    /** One {@code ```java} block of a doc: the line of its opening fence, its source (null if none named). */
    record Snippet(Path doc, int line, @Nullable String source, List<String> lines) {
    }

    /** The first snippet line not found in the source, counted from the fence (the first line is 1). */
    record Drift(int blockLine, String text) {
    }

    @Test
    void everyJavaSnippetIsAnExcerptOfACompiledExample() throws IOException {
        List<Snippet> snippets = new ArrayList<>();
        for (Path doc : docs()) {
            snippets.addAll(snippets(doc));
        }
        assertThat(snippets).as("java snippets found in README.md and docs/").hasSizeGreaterThan(5);
        List<String> problems = new ArrayList<>();
        for (Snippet s : snippets) {
            String where = ROOT.relativize(s.doc()) + ":" + s.line();
            if (s.source() == null) {
                problems.add(where + ": a ```java block without <!-- snippet: examples/src/... --> on the line above");
                continue;
            }
            if (!s.source().startsWith("examples/src/")) {
                problems.add(where + ": snippet source " + s.source() + " is not under examples/src/");
                continue;
            }
            Path file = ROOT.resolve(s.source());
            if (!Files.isRegularFile(file)) {
                problems.add(where + ": snippet source " + s.source() + " does not exist");
                continue;
            }
            Drift drift = missingPart(s.lines(), Files.readAllLines(file));
            if (drift != null) {
                problems.add(ROOT.relativize(s.doc()) + ":" + (s.line() + drift.blockLine()) + ": the snippet at line "
                        + s.line() + " is not in " + s.source() + " from here on (copy it again from the source): "
                        + drift.text());
            }
        }
        assertThat(problems).as("snippets that drifted from their sources").isEmpty();
    }

    @Test
    void detectsADriftedSnippet() {
        List<String> source = List.of("class A {", "    void f() {", "        int x = 1;", "    }", "}");
        assertThat(missingPart(List.of("void f() {", "int x = 1;"), source)).isNull();
        assertThat(missingPart(List.of("class A {", "...", "}"), source)).isNull();
        assertThat(missingPart(List.of("void f() {", "int x = 2;"), source)).isEqualTo(new Drift(2, "int x = 2;"));
        assertThat(missingPart(List.of("int x = 1;", "...", "class A {"), source)).isEqualTo(new Drift(3, "class A {"));
        assertThat(missingPart(List.of("", "  void f() {  ", "", "// ...", "}"), source)).isNull();
    }

    /** README.md and every .md under docs/. */
    static List<Path> docs() throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(ROOT.resolve("README.md"));
        try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The java blocks of one doc, each with the source named by the nearest non-blank line above it. */
    static List<Snippet> snippets(Path doc) {
        List<String> lines;
        try {
            lines = Files.readAllLines(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Snippet> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).strip().equals("```java")) {
                continue;
            }
            @Nullable String source = null;
            for (int j = i - 1; j >= 0; j--) {
                String above = lines.get(j).strip();
                if (above.isEmpty()) {
                    continue;
                }
                Matcher m = SOURCE.matcher(above);
                source = m.matches() ? m.group(1) : null;
                break;
            }
            List<String> body = new ArrayList<>();
            int j = i + 1;
            while (j < lines.size() && !lines.get(j).strip().startsWith("```")) {
                body.add(lines.get(j));
                j++;
            }
            out.add(new Snippet(doc, i + 1, source, body));
            i = j;
        }
        return out;
    }

    /**
     * Null if {@code snippet} is an excerpt of {@code source}, else which snippet line drifted: the first
     * line of the first part not found, after its longest prefix that is in the source. Parts are
     * separated by elision lines ({@code ...}); each part must appear contiguously after the previous one.
     */
    static @Nullable Drift missingPart(List<String> snippet, List<String> source) {
        List<String> src = source.stream().map(String::strip).toList();
        List<List<Integer>> parts = new ArrayList<>();
        List<Integer> part = new ArrayList<>();
        for (int i = 0; i < snippet.size(); i++) {
            String l = snippet.get(i).strip();
            if (l.equals("...") || l.equals("// ...")) {
                parts.add(part);
                part = new ArrayList<>();
            } else {
                part.add(i);
            }
        }
        parts.add(part);
        int from = 0;
        for (List<Integer> indices : parts) {
            List<Integer> p = new ArrayList<>(indices);
            while (!p.isEmpty() && snippet.get(p.get(0)).isBlank()) {
                p.remove(0);
            }
            while (!p.isEmpty() && snippet.get(p.get(p.size() - 1)).isBlank()) {
                p.remove(p.size() - 1);
            }
            if (p.isEmpty()) {
                continue;
            }
            List<String> lines = p.stream().map(i -> snippet.get(i).strip()).toList();
            int at = indexOf(src, lines, from);
            if (at < 0) {
                int matched = 0;
                for (int n = lines.size() - 1; n > 0 && matched == 0; n--) {
                    if (indexOf(src, lines.subList(0, n), from) >= 0) {
                        matched = n;
                    }
                }
                return new Drift(p.get(matched) + 1, lines.get(matched));
            }
            from = at + lines.size();
        }
        return null;
    }

    private static int indexOf(List<String> src, List<String> part, int from) {
        outer:
        for (int i = from; i + part.size() <= src.size(); i++) {
            for (int k = 0; k < part.size(); k++) {
                if (!src.get(i + k).equals(part.get(k))) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
