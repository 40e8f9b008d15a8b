// The JSON argument of a command, read strictly: known keys only, each of its one form, echoed bounded.
package rsmap.daemon.state;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import rsmap.Hex;
import rsmap.wire.Frame;

/**
 * a misspelt key ({@code "jobb"}) or a value of the wrong form ({@code "slots":1.5},
 * {@code true}, {@code 4294967297}, {@code 1e400}) is an ERROR, never read as something else. What an
 * ERROR echoes of the input is quoted and cut ({@link #quote}), so a reason stays one short line.
 */
public final class Args {
    /** The longest reason an ERROR carries: one line (docs/protocol.md). */
    public static final int MAX_REASON = 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    /** How much of a client's value an ERROR repeats. */
    static final int ECHO = 64;

    private final String command;
    private final JsonNode node;

    private Args(String command, JsonNode node) {
        this.command = command;
        this.node = node;
    }

    /** The single JSON object argument of {@code frame}, with no key outside {@code allowed}. */
    public static Args of(String command, Frame frame, Set<String> allowed) throws Refusal {
        JsonNode n = object(frame);
        for (Iterator<String> it = n.fieldNames(); it.hasNext();) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw Refusal.malformed(command + ": unknown key " + quote(key) + " (known: "
                        + String.join(", ", new TreeSet<>(allowed)) + ")");
            }
        }
        return new Args(command, n);
    }

    /** The single JSON object argument of {@code frame}, whatever its keys (its reader checks them). */
    public static JsonNode object(Frame frame) throws Refusal {
        if (frame.args().size() != 1) {
            throw Refusal.malformed("expected one JSON argument, got " + frame.args().size());
        }
        String text = frame.strictText(0).orElseThrow(() -> Refusal.malformed("the argument is not valid UTF-8"));
        JsonNode n;
        try {
            n = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw Refusal.malformed("the argument is not JSON: " + quote(e.getOriginalMessage()));
        }
        if (n == null || !n.isObject()) {
            throw Refusal.malformed("the argument is not a JSON object");
        }
        return n;
    }

    /** No argument, or an object as {@link #of}: QUERY may go without. */
    public static Args optional(String command, Frame frame, Set<String> allowed) throws Refusal {
        return frame.args().isEmpty() ? new Args(command, JSON.createObjectNode()) : of(command, frame, allowed);
    }

    /** The whole object, for a reader that checks its own members. */
    public JsonNode node() {
        return node;
    }

    /** The command's name, for its errors. */
    public String command() {
        return command;
    }

    public boolean has(String key) {
        return node.has(key);
    }

    /** A string value, or {@code dflt} when the key is absent; any other JSON type is an error. */
    public String string(String key, String dflt) throws Refusal {
        JsonNode v = node.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.isTextual()) {
            throw Refusal.malformed(command + ": \"" + key + "\" is a string, not " + kind(v));
        }
        return v.textValue();
    }

    /** A whole number from {@code min} to {@code max}, or {@code dflt} when absent; 1.5, true, "4" are errors. */
    public int integer(String key, int dflt, int min, int max) throws Refusal {
        JsonNode v = node.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < min || v.intValue() > max) {
            throw Refusal.malformed(command + ": \"" + key + "\" is a whole number from " + min + " to " + max
                    + ", not " + (v.isNumber() ? quote(v.asText()) : kind(v)));
        }
        return v.intValue();
    }

    private static String kind(JsonNode v) {
        return switch (v.getNodeType()) {
            case STRING -> "the string " + quote(v.textValue());
            case NUMBER -> "the number " + quote(v.asText());
            case BOOLEAN -> v.asText();
            case NULL -> "null";
            case ARRAY -> "a list";
            case OBJECT, POJO -> "an object";
            default -> "binary";
        };
    }

    /**
     * {@code s} as an ERROR may show it: in quotes, control characters escaped, cut after {@value #ECHO}
     * characters with the full length said.
     */
    public static String quote(String s) {
        if (s == null) {
            return "(none)";
        }
        StringBuilder b = new StringBuilder("'");
        int shown = Math.min(s.length(), ECHO);
        for (int i = 0; i < shown; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                Hex.append(b.append("\\u"), c, 4);
            } else {
                b.append(c);
            }
        }
        b.append('\'');
        if (s.length() > shown) {
            b.append("... (").append(s.length()).append(" characters)");
        }
        return b.toString();
    }

    /** The last guard: an ERROR reason is one line of at most {@code max} characters, whatever built it. */
    public static String oneLine(String reason, int max) {
        StringBuilder b = new StringBuilder(Math.min(reason.length(), max));
        for (int i = 0; i < reason.length() && b.length() < max; i++) {
            char c = reason.charAt(i);
            b.append(c == '\n' || c == '\r' || c == '\u2028' || c == '\u2029' ? ' ' : c);
        }
        if (reason.length() > max) {
            b.setLength(max - 3);
            b.append("...");
        }
        return b.toString();
    }
}
