package io.flowkafka.testing;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * Replays on a {@link TopologyTestDriver} what Kafka Streams' {@code StreamTask} does to its processors
 * when a task is revived: {@code closeTopology()} then {@code initializeTopology()}, both on the same
 * processor objects. The driver exposes neither, so they are reached by reflection; a Kafka Streams
 * version that renames them fails here with a message, not silently ({@code FlowTestDriverReviveTest}).
 */
final class TaskRevival {
    private TaskRevival() {
    }

    static void revive(TopologyTestDriver driver) {
        Object task;
        try {
            Field f = TopologyTestDriver.class.getDeclaredField("task");
            f.setAccessible(true);
            task = f.get(driver);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach the task of this Kafka Streams version's TopologyTestDriver "
                    + "(field 'task'): reviveTask() needs updating for it", e);
        }
        if (task == null) {
            throw new IllegalStateException("the driver runs no task (a topology of global stores only)");
        }
        invoke(task, "closeTopology");
        invoke(task, "initializeTopology");
    }

    private static void invoke(Object task, String name) {
        Method m;
        try {
            m = task.getClass().getDeclaredMethod(name);
            m.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach StreamTask." + name + "() of this Kafka Streams version: "
                    + "reviveTask() needs updating for it", e);
        }
        try {
            m.invoke(task);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("StreamTask." + name + "() failed", e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot call StreamTask." + name + "()", e);
        }
    }
}
