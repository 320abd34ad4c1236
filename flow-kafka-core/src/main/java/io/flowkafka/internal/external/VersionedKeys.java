package io.flowkafka.internal.external;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The record keys of a versioned reference topic: rows of several versions and one pointer naming the current
 * version (the Kafka analog of Flow's symlink, switched with one write).
 *
 * <p>Rule kept: a row key is {@code version (UTF-8) | 0x00 | encoded key} and the pointer key is the reserved
 * {@code 0x00 "pointer"}; a version is a non-empty string without NUL, so a row key never starts with 0x00 and
 * never equals the pointer key, and the rows of one version are one contiguous key range ordered by hash.
 *
 * <p>Stateless and thread-safe.
 */
public final class VersionedKeys {
    /** The key of the pointer record; its value is the current version (UTF-8). */
    private static final byte[] POINTER = pointerKey();

    private VersionedKeys() {
    }

    private static byte[] pointerKey() {
        byte[] name = "pointer".getBytes(StandardCharsets.UTF_8);
        byte[] k = new byte[name.length + 1];
        System.arraycopy(name, 0, k, 1, name.length);
        return k;
    }

    /** {@return a copy of the pointer record's key} */
    public static byte[] pointer() {
        return POINTER.clone();
    }

    /** Whether {@code key} is the pointer record's key. */
    public static boolean isPointer(byte[] key) {
        return Arrays.equals(key, POINTER);
    }

    /**
     * Checks a version name.
     *
     * @throws IllegalArgumentException if it is empty or holds a NUL character
     */
    public static byte[] checkedVersion(String version) {
        if (version.isEmpty() || version.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a version of a versioned reference is a non-empty string without NUL "
                    + "characters, not '" + version.replace("\0", "\\0") + "'");
        }
        return version.getBytes(StandardCharsets.UTF_8);
    }

    /** The key of the row of {@code encodedKey} in version {@code version}. */
    public static byte[] rowKey(byte[] version, byte[] encodedKey) {
        byte[] k = new byte[version.length + 1 + encodedKey.length];
        System.arraycopy(version, 0, k, 0, version.length);
        System.arraycopy(encodedKey, 0, k, version.length + 1, encodedKey.length);
        return k;
    }

    /** The first key of version {@code version}'s rows with a hash at least {@code hash}. */
    static byte[] rangeStart(byte[] version, long hash) {
        byte[] k = new byte[version.length + 9];
        System.arraycopy(version, 0, k, 0, version.length);
        for (int i = 0; i < 8; i++) {
            k[version.length + 1 + i] = (byte) (hash >>> (56 - 8 * i));
        }
        return k;
    }

    /** The version of a row key; null for the pointer or a key without the separator. */
    public static @Nullable String versionOf(byte[] key) {
        if (key.length == 0 || key[0] == 0) {
            return null;
        }
        for (int i = 1; i < key.length; i++) {
            if (key[i] == 0) {
                return new String(key, 0, i, StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** The encoded key of a row key of a version of {@code versionLength} bytes. */
    static byte[] encodedKeyOf(byte[] rowKey, int versionLength) {
        return Arrays.copyOfRange(rowKey, versionLength + 1, rowKey.length);
    }

    /** Whether {@code key} is a row of {@code version}. */
    static boolean isRowOf(byte[] key, byte[] version) {
        return key.length > version.length && key[version.length] == 0
                && Arrays.equals(key, 0, version.length, version, 0, version.length);
    }
}
