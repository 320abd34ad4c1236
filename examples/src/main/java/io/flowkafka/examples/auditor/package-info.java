/**
 * The auditor pattern (reference 000, "Computation with only a visit stream"): {@link
 * io.flowkafka.examples.auditor.AuditorPipeline} keeps the last login of each user in an external table through a
 * manager, and a computation with no input at all scans that table with a {@code finite: false} key visitor, once
 * per period, reporting the users idle for longer than a threshold ({@link io.flowkafka.examples.auditor.IdleAuditor}).
 */
@NullMarked
package io.flowkafka.examples.auditor;

import org.jspecify.annotations.NullMarked;
