/**
 * The operations HTTP server of a running instance ({@code flow.http.port}) and what it serves: the status page, the
 * merged status of every instance and the pipeline graph.
 */
@NullMarked
package io.flowkafka.internal.http;

import org.jspecify.annotations.NullMarked;
