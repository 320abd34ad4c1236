/**
 * What the runtime tells its operators: the errors and notes its tasks report, each task's last readings, and the
 * status every instance of a pipeline shares through its instances topic.
 */
@NullMarked
package io.flowkafka.internal.status;

import org.jspecify.annotations.NullMarked;
