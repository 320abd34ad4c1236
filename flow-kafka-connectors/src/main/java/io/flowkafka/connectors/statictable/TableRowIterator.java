package io.flowkafka.connectors.statictable;

import java.util.Iterator;
import org.apache.avro.generic.GenericRecord;

/**
 * The rows of a range of a static table, in order, holding at most one part file open.
 *
 * <p>Not thread-safe. Reading past the range's end closes the open file; {@link #close()} closes it
 * early. {@link #hasNext()} and {@link #next()} throw {@link java.io.UncheckedIOException} if a part
 * cannot be read.
 */
public interface TableRowIterator extends Iterator<GenericRecord>, AutoCloseable {
    /** Closes the open part file, if any; further calls are harmless. */
    @Override
    void close();
}
