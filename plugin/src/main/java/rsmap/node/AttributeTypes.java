// The declared types of host attributes ({"kernel":"version","cpu_speed":"number"}), declared once.
package rsmap.node;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * Attribute name to type, sorted by name. An attribute not declared here is typed by its value
 * ({@link AttributeValue#infer}). {@link #toString()} is the canonical JSON object that {@link #parse}
 * reads back.
 */
public record AttributeTypes(Map<String, AttributeType> types) {
    public static final AttributeTypes NONE = new AttributeTypes(Map.of());

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    public AttributeTypes {
        for (String name : types.keySet()) {
            String problem = NodeAttributes.nameProblem(name);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
        }
        types = java.util.Collections.unmodifiableMap(new TreeMap<>(types));
    }

    /** A JSON object of name to type name, e.g. {@code {"kernel":"version","arch":"string"}}. */
    public static AttributeTypes parse(String text, Limits limits) throws ParseException {
        if (text.length() > limits.maxInputChars()) {
            throw new ParseException("attribute types longer than " + limits.maxInputChars() + " characters", text,
                    limits.maxInputChars());
        }
        JsonNode node;
        try {
            node = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            int offset = at == null || at.getCharOffset() < 0 ? 0 : (int) Math.min(at.getCharOffset(), text.length());
            throw new ParseException("not JSON: " + e.getOriginalMessage(), text, offset);
        }
        if (node == null || !node.isObject()) {
            throw new ParseException("attribute types are a JSON object of name to type, e.g. "
                    + "{\"kernel\":\"version\"}", text, 0);
        }
        Map<String, String> names = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new ParseException("the type of '" + e.getKey() + "' must be a string: string, number, "
                        + "version or boolean", text, at(text, e.getKey()));
            }
            names.put(e.getKey(), e.getValue().asText());
        }
        try {
            return of(names);
        } catch (ParseException e) {
            throw new ParseException(e.problem(), text, at(text, e.input()));
        }
    }

    /** Name to type name; a refusal's input is the offending name. */
    public static AttributeTypes of(Map<String, String> declared) throws ParseException {
        Map<String, AttributeType> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : declared.entrySet()) {
            String problem = NodeAttributes.nameProblem(e.getKey());
            if (problem != null) {
                throw new ParseException(problem, e.getKey(), 0);
            }
            AttributeType t = AttributeType.byName(e.getValue()).orElseThrow(() -> new ParseException("unknown type '"
                    + e.getValue() + "' for '" + e.getKey() + "' (string, number, version or boolean)", e.getKey(), 0));
            out.put(e.getKey(), t);
        }
        return new AttributeTypes(out);
    }

    /** Where {@code name} first appears quoted in {@code text}, for a refusal's column; 0 if nowhere. */
    private static int at(String text, String name) {
        int i = text.indexOf('"' + name + '"');
        return Math.max(0, i);
    }

    /** The declared type of {@code name}. */
    public Optional<AttributeType> typeOf(String name) {
        return Optional.ofNullable(types.get(name));
    }

    /**
     * These declarations and {@code more}. A type is declared once: declaring a name again
     * with the same type is allowed, with another type refused, so that a value read under one type is
     * never silently compared under another.
     */
    public AttributeTypes declare(AttributeTypes more) throws ParseException {
        Map<String, AttributeType> out = new LinkedHashMap<>(types);
        for (Map.Entry<String, AttributeType> e : more.types.entrySet()) {
            AttributeType before = out.putIfAbsent(e.getKey(), e.getValue());
            if (before != null && before != e.getValue()) {
                throw new ParseException("'" + e.getKey() + "' is already declared " + before + "; a type is declared "
                        + "once", e.getKey(), 0);
            }
        }
        return new AttributeTypes(out);
    }

    /** The canonical form: a JSON object sorted by name. */
    @Override
    public String toString() {
        Map<String, String> out = new LinkedHashMap<>();
        types.forEach((k, v) -> out.put(k, v.toString()));
        try {
            return JSON.writeValueAsString(out);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always serialises", e);
        }
    }
}
