/**
 * The reconciliation example: a key visitor aligns a computation's own state with a static table read through a
 * {@code TStaticTableKeyVisitorJoiner} (reference 000, "Static table joiner").
 */
package io.flowkafka.examples.reconciliation;
