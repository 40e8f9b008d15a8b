// Compact JSON written straight into a buffer, for what every job start writes (its journal record and its
// answer): the bytes Jackson's ObjectNode.toString gives for the same fields, without building a tree.
package rsmap.daemon.records;

import java.util.List;
import java.util.Map;
import rsmap.Hex;
import rsmap.alloc.Grant;

/**
 * One object, its members in the order they are put. Strings are escaped as Jackson escapes them: {@code "}
 * and {@code \} by a backslash, BS, TAB, LF, FF and CR by their short escapes, every other character below
 * U+0020 as {@code \}{@code u00XX} (capital hex), everything else as it is ({@code JsonTextTest} holds the
 * two writers to the same bytes).
 */
public final class JsonText {
    private final StringBuilder b = new StringBuilder(256).append('{');
    /** No member yet in the innermost open object. */
    private boolean first = true;

    /** A member of the innermost open object; {@code null} is JSON null. */
    public JsonText put(String key, String value) {
        key(key);
        string(value);
        return this;
    }

    public JsonText put(String key, long value) {
        key(key);
        b.append(value);
        return this;
    }

    /** An object member of string values, in {@code values}' order. */
    public JsonText put(String key, Map<String, String> values) {
        open(key);
        values.forEach(this::put);
        return close();
    }

    /** {@code grant} as host -> map -> list of ids. */
    public JsonText put(String key, Grant grant) {
        open(key);
        grant.byHost().forEach((host, maps) -> {
            open(host);
            maps.forEach(this::strings);
            close();
        });
        return close();
    }

    /** Opens an object member: the members put next are its own until {@link #close}. */
    JsonText open(String key) {
        key(key);
        b.append('{');
        first = true;
        return this;
    }

    JsonText close() {
        b.append('}');
        first = false;
        return this;
    }

    private void strings(String key, List<String> values) {
        key(key);
        b.append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            string(values.get(i));
        }
        b.append(']');
    }

    private void key(String key) {
        if (!first) {
            b.append(',');
        }
        first = false;
        string(key);
        b.append(':');
    }

    private void string(String s) {
        if (s == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\b' -> b.append("\\b");
                case '\t' -> b.append("\\t");
                case '\n' -> b.append("\\n");
                case '\f' -> b.append("\\f");
                case '\r' -> b.append("\\r");
                default -> {
                    if (c < 0x20) {
                        Hex.appendUpper(b.append("\\u"), c, 4);
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    /** The object, closed. */
    public String text() {
        return b.append('}').toString();
    }
}
