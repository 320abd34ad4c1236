package io.flowkafka.benchmarks;

import io.flowkafka.benchmarks.CountingBenchmark.Latency;
import io.flowkafka.benchmarks.CountingBenchmark.Report;
import io.flowkafka.benchmarks.CountingBenchmark.Throughput;
import io.flowkafka.benchmarks.CountingJobs.Job;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Updates {@code RESULTS.md}: the summary table's rows with the same benchmark name are replaced
 * (others are kept), and the block of absolute figures of the latest invocation is rewritten.
 * Text outside the generated blocks is left alone.
 */
final class ResultsFile {
    static final String SUMMARY_BEGIN = "<!-- generated:summary:begin -->";
    static final String SUMMARY_END = "<!-- generated:summary:end -->";
    static final String DETAILS_BEGIN = "<!-- generated:details:begin -->";
    static final String DETAILS_END = "<!-- generated:details:end -->";
    static final String HEADER = "| benchmark | flow-kafka | baseline | ratio (flow / baseline) | date | command |\n"
            + "|---|---|---|---|---|---|";

    private ResultsFile() {
    }

    static void update(Path file, Report report, String date) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : skeleton();
        if (!text.contains(SUMMARY_BEGIN) || !text.contains(SUMMARY_END)) {
            text = text + "\n## Summary\n\n" + SUMMARY_BEGIN + "\n" + HEADER + "\n" + SUMMARY_END + "\n";
        }
        if (!text.contains(DETAILS_BEGIN) || !text.contains(DETAILS_END)) {
            text = text + "\n## Latest run: absolute figures\n\n" + DETAILS_BEGIN + "\n" + DETAILS_END + "\n";
        }
        Map<String, String> rows = new LinkedHashMap<>();
        String summary = between(text, SUMMARY_BEGIN, SUMMARY_END);
        for (String line : summary.split("\n")) {
            if (line.startsWith("| ") && !line.startsWith("| benchmark |")) {
                rows.put(line.substring(2, line.indexOf(" |", 2)), line);
            }
        }
        for (String row : newRows(report, date)) {
            rows.put(row.substring(2, row.indexOf(" |", 2)), row);
        }
        String newSummary = HEADER + "\n" + String.join("\n", rows.values());
        text = replaceBetween(text, SUMMARY_BEGIN, SUMMARY_END, newSummary);
        text = replaceBetween(text, DETAILS_BEGIN, DETAILS_END, details(report, date));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /**
     * Replaces (by benchmark name) or adds summary rows written by another benchmark than
     * {@code CountingBenchmark}; the rest of the file is kept.
     */
    static void upsertSummaryRows(Path file, java.util.List<String> newRows) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : skeleton();
        if (!text.contains(SUMMARY_BEGIN) || !text.contains(SUMMARY_END)) {
            text = text + "\n## Summary\n\n" + SUMMARY_BEGIN + "\n" + HEADER + "\n" + SUMMARY_END + "\n";
        }
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : between(text, SUMMARY_BEGIN, SUMMARY_END).split("\n")) {
            if (line.startsWith("| ") && !line.startsWith("| benchmark |")) {
                rows.put(line.substring(2, line.indexOf(" |", 2)), line);
            }
        }
        for (String row : newRows) {
            rows.put(row.substring(2, row.indexOf(" |", 2)), row);
        }
        text = replaceBetween(text, SUMMARY_BEGIN, SUMMARY_END, HEADER + "\n" + String.join("\n", rows.values()));
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    static String command(Report r) {
        return "`benchmarks/run.sh" + (r.o.commandLine.isBlank() ? "" : " " + r.o.commandLine) + "`";
    }

    private static String tag(Report r) {
        return String.format(Locale.ROOT, "%s keys%s, %d partitions, %d stream thread%s", compact(r.o.keys),
                r.o.zipf ? " zipf" : "", r.o.partitions, r.o.threads, r.o.threads == 1 ? "" : "s");
    }

    private static String compact(long n) {
        if (n >= 1_000_000 && n % 1_000_000 == 0) {
            return n / 1_000_000 + "M";
        }
        if (n >= 1_000 && n % 1_000 == 0) {
            return n / 1_000 + "k";
        }
        return Long.toString(n);
    }

    static List<String> newRows(Report r, String date) {
        List<String> rows = new ArrayList<>();
        if (r.has(Job.FLOW_OUTBOX) && r.has(Job.PLAIN) && !r.throughputs.isEmpty()) {
            double o = r.medianRate(Job.FLOW_OUTBOX);
            double b = r.medianRate(Job.PLAIN);
            rows.add(String.format(Locale.ROOT, "| sink paths, counting throughput, %s backlog, %s: outbox path "
                            + "(TKafkaSink, exactly-once delivery) vs plain Processor API app (EOS sink) | %,.0f records/s | "
                            + "%,.0f records/s | %.2fx (no target) | %s | %s |", compact(r.o.records), tag(r), o, b, o / b,
                    date, command(r)));
            if (r.has(Job.FLOW)) {
                double f = r.medianRate(Job.FLOW);
                rows.add(String.format(Locale.ROOT, "| sink paths, counting throughput, %s backlog, %s: sync path "
                                + "(KafkaSink in the epoch transaction) vs plain Processor API app (EOS sink) | %,.0f records/s | "
                                + "%,.0f records/s | %.2fx (no target) | %s | %s |", compact(r.o.records), tag(r), f, b,
                        f / b, date, command(r)));
            }
        }
        if (r.has(Job.FLOW_OUTBOX) && r.has(Job.FLOW)) {
            if (!r.throughputs.isEmpty()) {
                double o = r.medianRate(Job.FLOW_OUTBOX);
                double f = r.medianRate(Job.FLOW);
                rows.add(String.format(Locale.ROOT, "| sink paths, counting throughput, %s backlog, %s: outbox path "
                                + "(TKafkaSink, exactly-once delivery) vs sync path (KafkaSink) | %,.0f records/s | "
                                + "%,.0f records/s | %.2fx (target >= 0.80: %s) | %s | %s |", compact(r.o.records),
                        tag(r), o, f, o / f, o / f >= 0.8 ? "met" : "missed", date, command(r)));
            }
            if (!r.latencies.isEmpty()) {
                rows.add(String.format(Locale.ROOT, "| sink paths, latency from input produce to a committed record on "
                                + "the target (read_committed), paced %s records/s, %s: outbox path (TKafkaSink) vs sync "
                                + "path (KafkaSink), p50 / p99 | %.0f / %.0f ms | %.0f / %.0f ms | %.2fx p99 (reported, "
                                + "no target) | %s | %s |", compact(r.o.rate), tag(r), r.medianP50(Job.FLOW_OUTBOX),
                        r.medianP99(Job.FLOW_OUTBOX), r.medianP50(Job.FLOW), r.medianP99(Job.FLOW),
                        r.medianP99(Job.FLOW_OUTBOX) / r.medianP99(Job.FLOW), date, command(r)));
            }
        }
        for (Job flow : List.of(Job.FLOW, Job.FLOW_KEYED)) {
            if (!r.has(flow)) {
                continue;
            }
            for (Job base : List.of(Job.PLAIN, Job.PLAIN_REPARTITION)) {
                if (!r.has(base)) {
                    continue;
                }
                String vs = (flow == Job.FLOW ? "flow" : "flow with a keyed source (one sub-topology)")
                        + (base == Job.PLAIN ? " vs plain Processor API app"
                                : " vs plain app with a repartition topic (same hop count)");
                if (flow == Job.FLOW_KEYED && base == Job.PLAIN_REPARTITION) {
                    continue; // one hop against two: not a like-for-like pair
                }
                if (!r.throughputs.isEmpty()) {
                    double f = r.medianRate(flow);
                    double b = r.medianRate(base);
                    rows.add(String.format(Locale.ROOT, "| counting throughput, %s backlog, %s: %s | %,.0f records/s | "
                                    + "%,.0f records/s | %.2fx (target >= 0.90: %s) | %s | %s |", compact(r.o.records),
                            tag(r), vs, f, b, f / b, f / b >= 0.9 ? "met" : "missed", date, command(r)));
                }
                if (!r.latencies.isEmpty()) {
                    double f = r.medianP99(flow);
                    double b = r.medianP99(base);
                    rows.add(String.format(Locale.ROOT, "| counting p99 latency, paced %s records/s, %s: %s | %.0f ms | "
                                    + "%.0f ms | %.2fx (target <= 1.20: %s) | %s | %s |", compact(r.o.rate), tag(r), vs, f,
                            b, f / b, f / b <= 1.2 ? "met" : "missed", date, command(r)));
                }
            }
        }
        return rows;
    }

    static String details(Report r, String date) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%s: %s. Command: %s. Took %.1f min. Load average before %s, after %s; "
                        + "CPU used by other processes during the runs: median %.2f, max %.2f cores (of %d). "
                        + "Exactly-once check problems: %d.%n%n", date, r.description, command(r), r.minutes,
                r.loadBefore, r.loadAfter, r.otherCoresMedian(), r.otherCoresMax(),
                Runtime.getRuntime().availableProcessors(), r.problems()));
        b.append("| job | records/s (median) | records/s after first output | first output (s) | stream-thread "
                + "CPU us/record | JVM CPU us/record | p50 ms | p99 ms | p99.9 ms |\n"
                + "|---|---|---|---|---|---|---|---|---|\n");
        for (Job job : r.o.jobs) {
            b.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f | %.1f | %.1f | %.0f | %.0f | %.0f |%n",
                    job.label, r.medianRate(job), r.medianSteady(job), r.medianFirst(job), r.medianStreamCpuUs(job),
                    r.medianJvmCpuUs(job), r.medianP50(job), r.medianP99(job), r.medianP999(job)));
        }
        b.append(String.format(Locale.ROOT, "| anchor (BUILD-NOTES): Kafka Streams count, EOS | ~%,.0f | | | | | ~%d "
                        + "| ~%d | |%n", CountingBenchmark.ANCHOR_PLAIN_EOS_RATE, CountingBenchmark.ANCHOR_P50_MS,
                CountingBenchmark.ANCHOR_P99_MS));
        if (r.has(Job.PLAIN)) {
            b.append(String.format(Locale.ROOT, "%nplain vs anchor: throughput %.2fx, p50 %.2fx, p99 %.2fx.%n",
                    r.medianRate(Job.PLAIN) / CountingBenchmark.ANCHOR_PLAIN_EOS_RATE,
                    r.medianP50(Job.PLAIN) / CountingBenchmark.ANCHOR_P50_MS,
                    r.medianP99(Job.PLAIN) / CountingBenchmark.ANCHOR_P99_MS));
        }
        b.append("\nEvery run, in the order run:\n\n| round | job | mode | result | other CPU (cores) | check |\n"
                + "|---|---|---|---|---|---|\n");
        int rounds = r.o.runs;
        for (int round = 1; round <= rounds; round++) {
            for (Throughput t : r.throughputs) {
                if (t.round() == round) {
                    b.append(String.format(Locale.ROOT, "| %d | %s | throughput | %,.0f records/s (%.2f s; %,.0f "
                                    + "records/s after the first output at %.2f s; CPU s: stream thread %.1f, job %.1f, "
                                    + "JVM %.1f; changelog records %,d) | %.2f | %s |%n", round, t.job().label, t.rate(),
                            t.seconds(), t.steadyRate(), t.firstOutputS(), t.cpu().streamThreads(),
                            t.cpu().appThreads(), t.cpu().jvm(), t.changelogRecords(), t.otherCores(),
                            check(t.problem(), t.notes())));
                }
            }
            for (Latency l : r.latencies) {
                if (l.round() == round) {
                    b.append(String.format(Locale.ROOT, "| %d | %s | latency | p50 %d ms, p99 %d ms, p99.9 %d ms, max "
                                    + "%d ms (%,d records; producer behind schedule by at most %d ms) | %.2f | %s |%n",
                            round, l.job().label, l.p50(), l.p99(), l.p999(), l.max(), l.measured(),
                            l.producerLagMs(), l.otherCores(), check(l.problem(), l.notes())));
                }
            }
        }
        return b.toString().stripTrailing();
    }

    private static String check(@org.jspecify.annotations.Nullable String problem, String notes) {
        return (problem == null ? "ok" : problem) + (notes.isEmpty() ? "" : " (" + notes + ")");
    }

    private static String between(String text, String begin, String end) {
        int i = text.indexOf(begin) + begin.length();
        return text.substring(i, text.indexOf(end, i));
    }

    private static String replaceBetween(String text, String begin, String end, String content) {
        int i = text.indexOf(begin) + begin.length();
        int j = text.indexOf(end, i);
        return text.substring(0, i) + "\n" + content + "\n" + text.substring(j);
    }

    private static String skeleton() {
        return "# Benchmark results\n\nWritten by `io.flowkafka.benchmarks.CountingBenchmark`; see README.md for how to "
                + "run and profile.\n\n## Summary\n\n" + SUMMARY_BEGIN + "\n" + HEADER + "\n" + SUMMARY_END
                + "\n\n## Latest run: absolute figures\n\n" + DETAILS_BEGIN + "\n" + DETAILS_END + "\n";
    }
}
