package io.flowkafka.connectors.clickhouse;

import java.io.IOException;
import java.net.URI;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An error answer of a ClickHouse server: its HTTP status, ClickHouse's error code and message. Owns the rule that
 * tells a problem a retry can fix from one it cannot ({@link #permanent()}).
 */
public final class ClickHouseException extends IOException {
    private static final long serialVersionUID = 1L;
    private static final Pattern CODE = Pattern.compile("Code: (\\d+)");
    /**
     * Codes a retry cannot fix: unknown table/database/column, syntax, type and parse errors, access denied.
     * 16 NO_SUCH_COLUMN_IN_TABLE, 26/27 cannot parse, 47 UNKNOWN_IDENTIFIER, 53 TYPE_MISMATCH, 60 UNKNOWN_TABLE,
     * 62 SYNTAX_ERROR, 81 UNKNOWN_DATABASE, 115 UNKNOWN_SETTING, 117 INCORRECT_DATA, 192 UNKNOWN_USER,
     * 193 WRONG_PASSWORD, 497 ACCESS_DENIED, 516 AUTHENTICATION_FAILED.
     */
    private static final Set<Integer> PERMANENT = Set.of(16, 26, 27, 47, 53, 60, 62, 81, 115, 117, 192, 193, 497, 516);

    private final int status;
    private final int code;

    private ClickHouseException(String message, int status, int code) {
        super(message);
        this.status = status;
        this.code = code;
    }

    static ClickHouseException of(URI server, int status, String codeHeader, String body) {
        int code = -1;
        if (codeHeader != null) {
            code = Integer.parseInt(codeHeader.trim());
        } else {
            Matcher m = CODE.matcher(body);
            if (m.find()) {
                code = Integer.parseInt(m.group(1));
            }
        }
        return new ClickHouseException("ClickHouse at " + server + " answered HTTP " + status + ": " + body.strip(),
                status, code);
    }

    /**
     * The HTTP status.
     *
     * @return the status code of the answer
     */
    public int status() {
        return status;
    }

    /**
     * ClickHouse's error code ({@code Code: N} of the message).
     *
     * @return the code, or -1 when the answer had none
     */
    public int code() {
        return code;
    }

    /**
     * Whether retrying the same request cannot help (a missing table or column, rows that do not parse, access
     * denied); false for everything else (overload, ZooKeeper or replica trouble, timeouts).
     *
     * @return true for a permanent error
     */
    public boolean permanent() {
        return PERMANENT.contains(code);
    }
}
