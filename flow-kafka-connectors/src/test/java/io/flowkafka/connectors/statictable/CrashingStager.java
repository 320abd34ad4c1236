package io.flowkafka.connectors.statictable;

import java.nio.file.Path;
import java.time.Instant;

/**
 * A deliverer's staging until it is killed: stages batches of 2000 rows of partition 0 (ids 0, 1, ...), printing the
 * last id of each batch once {@code stage} returned; {@link ArrivalOrderStagingCrashTest} kills it with SIGKILL.
 */
final class CrashingStager {
    private CrashingStager() {
    }

    public static void main(String[] args) throws Exception {
        ArrivalOrderTableSink sink = ArrivalOrderStagingCrashTest.sink(Path.of(args[0]));
        sink.coverage(0, Instant.now());
        for (long base = 0; ; base += 2_000) {
            sink.stage(0, ArrivalOrderTableSinkTest.rows(base, base + 2_000));
            System.out.println(base + 1_999);
            System.out.flush();
        }
    }
}
