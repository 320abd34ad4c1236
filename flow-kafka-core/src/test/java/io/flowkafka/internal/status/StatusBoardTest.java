package io.flowkafka.internal.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.flowkafka.runtime.StatusError;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link StatusBoard}: errors by task and path. */
class StatusBoardTest {
    @Test
    void shouldClearTheStartErrorsOfTasksThatRunElsewhereAfterARebalance() {
        StatusBoard board = new StatusBoard();
        board.report("count", 0, StatusBoard.TASK_START_PATH, "task 1_0 cannot start", Instant.EPOCH);
        board.report("count", 1, StatusBoard.TASK_START_PATH, "task 1_1 cannot start", Instant.EPOCH);
        board.report("count", 1, "sinks/out/stopped", "the sink stopped", Instant.EPOCH);
        board.clearPathExcept(StatusBoard.TASK_START_PATH, Set.of("count/1"));
        assertThat(board.errors()).extracting(StatusError::partition, StatusError::path).containsExactly(
                tuple(1, "sinks/out/stopped"),
                tuple(1, StatusBoard.TASK_START_PATH));
    }
}
