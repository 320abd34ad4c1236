/**
 * Flow's {@code TAsyncHttpSink}: {@link io.flowkafka.connectors.http.HttpSinkProvider}, found through
 * {@link java.util.ServiceLoader} when this module is on the class path, delivers an async sink's messages from the
 * transactional outbox as HTTP requests (one per message, {@code Idempotency-Key} = the stable message id), at least
 * once. A spec names it by class ({@code TAsyncHttpSink}); applications do not call it.
 */
@NullMarked
package io.flowkafka.connectors.http;

import org.jspecify.annotations.NullMarked;
