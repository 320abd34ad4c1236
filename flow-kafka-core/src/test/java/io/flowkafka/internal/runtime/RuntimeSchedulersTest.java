package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The runtime's time-critical work (the watermark-alignment poll, every 200 ms) keeps its cadence
 * while an admin call on the maintenance thread waits on the cluster (up to 30 s per call).
 */
class RuntimeSchedulersTest {
    private final RuntimeSchedulers schedulers = new RuntimeSchedulers("p");
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void stop() {
        release.countDown();
        schedulers.shutdown(Duration.ofSeconds(5));
    }

    @Test
    void shouldKeepPollingAlignmentWhileAnAdminCallIsBlocked() throws InterruptedException {
        CountDownLatch adminCallStarted = new CountDownLatch(1);
        AtomicBoolean adminCallReturned = new AtomicBoolean();
        schedulers.scheduleSlow("slow work", () -> {
            adminCallStarted.countDown();
            await(release);
            adminCallReturned.set(true);
        }, 0, 500);
        assertThat(adminCallStarted.await(5, TimeUnit.SECONDS)).isTrue();

        CountDownLatch alignmentPolls = new CountDownLatch(5);
        schedulers.scheduleFast("alignment", alignmentPolls::countDown, 0, 10);

        assertThat(alignmentPolls.await(5, TimeUnit.SECONDS)).as("alignment polled five times").isTrue();
        assertThat(adminCallReturned).as("while the admin call was still blocked").isFalse();
    }

    @Test
    void shouldRunOnNamedDaemonThreadsAndInterruptABlockedCallOnShutdown() throws InterruptedException {
        AtomicReference<Thread> slowThread = new AtomicReference<>();
        AtomicReference<Thread> fastThread = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(2);
        AtomicBoolean interrupted = new AtomicBoolean();
        schedulers.scheduleSlow("slow work", () -> {
            slowThread.set(Thread.currentThread());
            started.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        }, 0, 500);
        schedulers.scheduleFast("fast work", () -> {
            if (fastThread.compareAndSet(null, Thread.currentThread())) {
                started.countDown();
            }
        }, 0, 10);
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();

        assertThat(slowThread.get().getName()).isEqualTo("flow-p-maintenance");
        assertThat(fastThread.get().getName()).isEqualTo("flow-p-maintenance-fast");
        assertThat(slowThread.get().isDaemon()).isTrue();
        assertThat(fastThread.get().isDaemon()).isTrue();

        assertThat(schedulers.shutdown(Duration.ofSeconds(5))).as("both threads ended").isTrue();
        assertThat(interrupted).as("the blocked call was interrupted, not waited for").isTrue();
        slowThread.get().join(5_000);
        fastThread.get().join(5_000);
        assertThat(slowThread.get().isAlive()).isFalse();
        assertThat(fastThread.get().isAlive()).isFalse();
    }

    /**
     * A scheduled executor cancels a schedule whose run throws: the completion watch, output limits or alignment
     * would stop for good while the pipeline looks healthy. An error or exception ends one run, not the schedule.
     */
    @Test
    void shouldRunATaskAgainAfterARunThrew() throws InterruptedException {
        CountDownLatch slowRuns = new CountDownLatch(3);
        CountDownLatch fastRuns = new CountDownLatch(3);
        schedulers.scheduleSlow("slow work", () -> {
            slowRuns.countDown();
            throw new StackOverflowError("a run that fails with an error");
        }, 0, 10);
        schedulers.scheduleFast("fast work", () -> {
            fastRuns.countDown();
            throw new IllegalStateException("a run that fails with an exception");
        }, 0, 10);

        assertThat(slowRuns.await(5, TimeUnit.SECONDS)).as("the slow task ran again after an error").isTrue();
        assertThat(fastRuns.await(5, TimeUnit.SECONDS)).as("the fast task ran again after an exception").isTrue();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
