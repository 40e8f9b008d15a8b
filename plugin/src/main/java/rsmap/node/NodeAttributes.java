// A host's non-consumable attributes, name to typed value, for filters and, later, the daemon.
package rsmap.node;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * Attributes in the order given. Values are read with the declared type, else inferred (a number
 * when the text reads as one, else a string). No discovery here: whoever knows the host's values
 * (rsmapd.conf, /proc, a simulate script) passes them as text.
 */
public final class NodeAttributes {
    public static final NodeAttributes NONE = new NodeAttributes(Map.of());

    /** The name filters use for the host name; never an attribute of its own. */
    public static final String HOST = "host";

    private final Map<String, AttributeValue> values;
    /**
     * The names (interned, as a filter's are: see Comparison) and values side by side: a filter run over
     * 10,000 hosts finds an attribute by comparing references along one short array, not through a map.
     */
    private final String[] names;
    private final AttributeValue[] vals;

    public NodeAttributes(Map<String, AttributeValue> values) {
        Map<String, AttributeValue> interned = new LinkedHashMap<>();
        for (Map.Entry<String, AttributeValue> e : values.entrySet()) {
            String problem = nameProblem(e.getKey());
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            interned.put(e.getKey().intern(), java.util.Objects.requireNonNull(e.getValue()));
        }
        this.values = Collections.unmodifiableMap(interned);
        this.names = interned.keySet().toArray(new String[0]);
        this.vals = interned.values().toArray(new AttributeValue[0]);
    }

    /** Name to value, in the order given. */
    public Map<String, AttributeValue> values() {
        return values;
    }

    public static NodeAttributes parse(Map<String, String> text, AttributeTypes types) throws ParseException {
        return parse(text, types, Limits.DEFAULT);
    }

    /**
     * Reads each value with its declared type, else infers it. A refusal's problem starts with
     * "attribute 'name': " and its input is the offending value.
     */
    public static NodeAttributes parse(Map<String, String> text, AttributeTypes types, Limits limits)
            throws ParseException {
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : text.entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            String problem = nameProblem(name);
            if (problem != null) {
                throw new ParseException(problem, name, 0);
            }
            if (value.length() > limits.maxTokenChars()) {
                throw new ParseException("attribute '" + name + "': value longer than " + limits.maxTokenChars()
                        + " characters", value, limits.maxTokenChars());
            }
            Optional<AttributeType> declared = types.typeOf(name);
            try {
                out.put(name, declared.isPresent() ? AttributeValue.parse(declared.get(), value)
                        : AttributeValue.infer(value));
            } catch (ParseException x) {
                throw new ParseException("attribute '" + name + "' (" + declared.get() + "): " + x.problem(), value,
                        x.offset());
            }
        }
        return new NodeAttributes(out);
    }

    /** These attributes read again under {@code types}: what a declaration made after the host does. */
    public NodeAttributes retype(AttributeTypes types, Limits limits) throws ParseException {
        return parse(text(), types, limits);
    }

    /** Each value as written. */
    public Map<String, String> text() {
        Map<String, String> out = new LinkedHashMap<>();
        values.forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    public Optional<AttributeValue> get(String name) {
        return Optional.ofNullable(values.get(name));
    }

    /** The value or null: the evaluator's path, which allocates nothing; {@code name} must be interned. */
    AttributeValue valueOrNull(String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i] == name) {
                return vals[i];
            }
        }
        return null;
    }

    /**
     * Why {@code name} cannot name an attribute, or null. A name is a letter or '_', then letters,
     * digits, '_', '.', '-' (ASCII); {@code host}, {@code in}, {@code true} and {@code false} are the
     * filter language's own.
     */
    public static String nameProblem(String name) {
        if (name.isEmpty()) {
            return "empty attribute name";
        }
        if (name.length() > 256) {
            return "attribute name longer than 256 characters";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean letter = c < 128 && (Character.isLetter(c) || c == '_');
            if (!(letter || i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'))) {
                return "'" + name + "' is not an attribute name (a letter or _, then letters, digits, _ . -)";
            }
        }
        if (name.equals(HOST) || name.equals("in") || name.equals("true") || name.equals("false")) {
            return "'" + name + "' is reserved in filters and cannot name an attribute";
        }
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeAttributes && ((NodeAttributes) o).values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return text().toString();
    }
}
