package io.flowkafka.benchmarks.waitclick;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replaces (by benchmark name) or adds rows of the summary table in {@code RESULTS.md}, leaving the
 * rest of the file alone. The same format and markers as {@code io.flowkafka.benchmarks.ResultsFile
 * .upsertSummaryRows}, which is package-private in the benchmarks module.
 */
final class SummaryRows {
    static final String BEGIN = "<!-- generated:summary:begin -->";
    static final String END = "<!-- generated:summary:end -->";
    static final String HEADER = "| benchmark | flow-kafka | baseline | ratio (flow / baseline) | date | command |\n"
            + "|---|---|---|---|---|---|";

    private SummaryRows() {
    }

    static void upsert(Path file, List<String> newRows) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "# Benchmark results\n";
        if (!text.contains(BEGIN) || !text.contains(END)) {
            text = text + "\n## Summary\n\n" + BEGIN + "\n" + HEADER + "\n" + END + "\n";
        }
        int from = text.indexOf(BEGIN) + BEGIN.length();
        int to = text.indexOf(END, from);
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : text.substring(from, to).split("\n")) {
            if (line.startsWith("| ") && !line.startsWith("| benchmark |")) {
                rows.put(line.substring(2, line.indexOf(" |", 2)), line);
            }
        }
        for (String row : newRows) {
            rows.put(row.substring(2, row.indexOf(" |", 2)), row);
        }
        text = text.substring(0, from) + "\n" + HEADER + "\n" + String.join("\n", rows.values()) + "\n"
                + text.substring(to);
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
