// A place in a JSON document ("$.resources[0].with[1].count") and the checks made there: every refusal
// of a jobspec or an R names the place it was found.
package rsmap.flux;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Set;
import java.util.regex.Pattern;
import rsmap.Hex;

/** An immutable JSON path, printed in the dotted form {@code $.a[0].b} ({@code $["odd key"]} where needed). */
final class Where {
    static final Where ROOT = new Where(null, null, -1);
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final Where parent;
    /** The property name, or null for an array index. */
    private final String key;
    private final int index;

    private Where(Where parent, String key, int index) {
        this.parent = parent;
        this.key = key;
        this.index = index;
    }

    Where key(String name) {
        return new Where(this, name, -1);
    }

    Where index(int i) {
        return new Where(this, null, i);
    }

    /** The same place as a JSON pointer, to find it in the text again. */
    JsonPointer pointer() {
        if (parent == null) {
            return JsonPointer.empty();
        }
        return key != null ? parent.pointer().appendProperty(key) : parent.pointer().appendIndex(index);
    }

    Where parent() {
        return parent == null ? this : parent;
    }

    @Override
    public String toString() {
        if (parent == null) {
            return "$";
        }
        if (key == null) {
            return parent + "[" + index + "]";
        }
        return PLAIN.matcher(key).matches() ? parent + "." + key : parent + "[" + quote(key) + "]";
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length() && i < 64; i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                Hex.append(b.append("\\u"), c, 4);
            } else {
                b.append(c);
            }
        }
        return b.append(s.length() > 64 ? "...\"" : "\"").toString();
    }

    Invalid invalid(String problem) {
        return new Invalid(this, problem);
    }

    // ---- checks, each refusing at this place ----

    ObjectNode object(JsonNode n) throws Invalid {
        if (!(n instanceof ObjectNode o)) {
            throw invalid("must be an object, not " + kind(n));
        }
        return o;
    }

    JsonNode array(JsonNode n) throws Invalid {
        if (!n.isArray()) {
            throw invalid("must be an array, not " + kind(n));
        }
        return n;
    }

    String string(JsonNode n) throws Invalid {
        if (!n.isTextual()) {
            throw invalid("must be a string, not " + kind(n));
        }
        return n.textValue();
    }

    /** A JSON integer that fits an int (3 or 3 written as an integer, never 3.0 or "3"). */
    int integer(JsonNode n) throws Invalid {
        if (!n.isIntegralNumber()) {
            throw invalid("must be an integer, not " + kind(n));
        }
        if (!n.canConvertToInt()) {
            throw invalid("integer " + clip(n.asText()) + " is out of range");
        }
        return n.intValue();
    }

    /** A finite JSON number. */
    double number(JsonNode n) throws Invalid {
        if (!n.isNumber()) {
            throw invalid("must be a number, not " + kind(n));
        }
        double d = n.doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            throw invalid("number " + clip(n.asText()) + " is out of range");
        }
        return d;
    }

    /** The member {@code name} of {@code o}, refused at the member's place when absent. */
    JsonNode required(ObjectNode o, String name) throws Invalid {
        JsonNode n = o.get(name);
        if (n == null) {
            throw key(name).invalid("required, but missing");
        }
        return n;
    }

    /** Refuses the first member of {@code o} not in {@code allowed}, at that member. */
    void onlyKeys(ObjectNode o, Set<String> allowed) throws Invalid {
        Iterator<String> names = o.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw key(name).invalid("unknown key (allowed here: " + String.join(", ", allowed.stream().sorted()
                        .toList()) + ")");
            }
        }
    }

    static String kind(JsonNode n) {
        return switch (n.getNodeType()) {
            case OBJECT, POJO -> "an object";
            case ARRAY -> "an array";
            case STRING -> "a string";
            case NUMBER -> n.isIntegralNumber() ? "an integer" : "a number";
            case BOOLEAN -> "a boolean";
            case NULL, MISSING -> "null";
            case BINARY -> "binary data";
        };
    }

    private static String clip(String s) {
        return s.length() > 24 ? s.substring(0, 24) + "..." : s;
    }

    /** A refusal at a place in a document; {@link Documents} turns it into a located ParseException. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Where where;

        Invalid(Where where, String problem) {
            super(problem, null, false, false);
            this.where = where;
        }

        Where where() {
            return where;
        }
    }
}
