package io.flowkafka.connectors.statictable;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * A task's staging until it is killed: prepares epochs of 2000 rows of partition 0 (ids 0, 1, ...), printing each
 * epoch's pending name and last id once {@code prepare} returned, and makes it visible once a line on its input says
 * the epoch's transaction committed; {@link ArrivalOrderStagingCrashTest} plays the transaction and kills it with
 * SIGKILL.
 */
final class CrashingStager {
    private CrashingStager() {
    }

    public static void main(String[] args) throws Exception {
        ArrivalOrderTableSink sink = ArrivalOrderStagingCrashTest.sink(Path.of(args[0]));
        sink.coverage(0, List.of(), Instant.now());
        BufferedReader commits = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (long base = 0; ; base += 2_000) {
            StagingArea.Prepared epoch = sink.prepare(0, ArrivalOrderTableSinkTest.rows(base, base + 2_000));
            System.out.println(epoch.pending().getFileName() + " " + (base + 1_999));
            System.out.flush();
            if (commits.readLine() == null) {
                return;
            }
            sink.complete(epoch);
        }
    }
}
