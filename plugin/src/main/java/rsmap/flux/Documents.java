// Reading a jobspec or an R from JSON or YAML text under the limits, and pointing refusals back into
// the text: a problem found in the tree becomes a ParseException at the line and column of its place.
package rsmap.flux;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import rsmap.Limits;
import rsmap.ParseException;

/**
 * JSON when the text opens with '{' or '[' (after blanks), YAML otherwise (jobspec is YAML, RFC 25;
 * R is JSON, RFC 20; either file may be written in either). Limits: the input length, the nesting depth
 * ({@link Limits#maxExpressionDepth()}) and the string length ({@link Limits#maxTokenChars()}) are
 * enforced by the parsers themselves, before a tree is built; duplicate keys are refused; YAML aliases
 * are never expanded into copies (Jackson reads them as plain values or refuses them).
 */
final class Documents {
    /** The canonical JSON writer: compact, members in the order the types put them. */
    static final ObjectMapper WRITER = new ObjectMapper().disable(SerializationFeature.INDENT_OUTPUT);

    private Documents() {
    }

    static JsonNode read(String text, Limits limits) throws ParseException {
        if (text.length() > limits.maxInputChars()) {
            throw new ParseException("document longer than " + limits.maxInputChars() + " characters", text, 0);
        }
        boolean json = isJson(text);
        ObjectMapper mapper = mapper(json, limits);
        JsonNode tree;
        try {
            tree = mapper.readTree(text);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String problem = e.getOriginalMessage();
            throw new ParseException((json ? "not JSON: " : "not YAML: ") + firstLine(problem), text,
                    at == null ? 0 : offset(text, at));
        } catch (IOException | RuntimeException e) {
            // SnakeYAML reports some limits (code points, aliases) as its own runtime exceptions
            throw new ParseException((json ? "not JSON: " : "not YAML: ") + firstLine(String.valueOf(e.getMessage())),
                    text, 0);
        }
        if (tree == null || tree.isMissingNode()) {
            throw new ParseException("empty document", text, 0);
        }
        return tree;
    }

    /** The refusal as a ParseException at the place's line and column (or its nearest ancestor's). */
    static ParseException refuse(String text, Where.Invalid invalid, Limits limits) {
        Where w = invalid.where();
        int offset = 0;
        try {
            offset = locate(text, w.pointer(), limits);
        } catch (IOException | RuntimeException e) {
            offset = 0; // the text parsed once already; a failure here only loses the column
        }
        return new ParseException(w + ": " + invalid.getMessage(), text, offset);
    }

    /** The offset of the value (or key) at {@code target}, or of its closest ancestor present. */
    private static int locate(String text, JsonPointer target, Limits limits) throws IOException {
        JsonFactory factory = mapper(isJson(text), limits).getFactory();
        int best = 0;
        int bestDepth = -1;
        try (JsonParser p = factory.createParser(text)) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                    continue;
                }
                JsonPointer here = p.getParsingContext().pathAsPointer();
                if (here.equals(target)) {
                    return offset(text, p.currentTokenLocation());
                }
                int depth = depth(here);
                if (depth > bestDepth && isPrefix(here, target)) {
                    best = offset(text, p.currentTokenLocation());
                    bestDepth = depth;
                }
            }
        }
        return best;
    }

    private static boolean isPrefix(JsonPointer prefix, JsonPointer of) {
        String a = prefix.toString();
        String b = of.toString();
        return b.equals(a) || b.startsWith(a + "/") || a.isEmpty();
    }

    private static int depth(JsonPointer p) {
        int d = 0;
        for (JsonPointer q = p; !q.matches(); q = q.tail()) {
            d++;
        }
        return d;
    }

    private static int offset(String text, JsonLocation at) {
        int line = Math.max(1, at.getLineNr());
        int column = Math.max(1, at.getColumnNr());
        int i = 0;
        for (int l = 1; l < line && i >= 0; l++) {
            i = text.indexOf('\n', i);
            i = i < 0 ? -1 : i + 1;
        }
        if (i < 0) {
            return text.length();
        }
        return Math.min(text.length(), i + column - 1);
    }

    private static boolean isJson(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!Character.isWhitespace(c)) {
                return c == '{' || c == '[';
            }
        }
        return false;
    }

    private static ObjectMapper mapper(boolean json, Limits limits) {
        StreamReadConstraints constraints = StreamReadConstraints.builder()
                .maxNestingDepth(limits.maxExpressionDepth())
                .maxStringLength(limits.maxInputChars())
                .maxNumberLength(64)
                .maxNameLength(limits.maxTokenChars())
                .build();
        JsonFactory factory;
        if (json) {
            factory = JsonFactory.builder().streamReadConstraints(constraints)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        } else {
            // SnakeYAML's own defaults stay (nesting 50, 3 MB of code points): plugin imports Jackson only
            factory = YAMLFactory.builder().streamReadConstraints(constraints)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        }
        return new ObjectMapper(factory).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "unreadable";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
