// A systemd unit file read the way systemd reads it (systemd.syntax(7)): sections, `Key=value` lines,
// `#`/`;` comments, a `\` at a line end continuing it. Enough for the tests to take ExecStart and the
// environment from the installed unit instead of repeating them.
package rsmap.packaging;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

record UnitFile(Map<String, List<Map.Entry<String, String>>> sections) {

    static UnitFile read(Path file) throws IOException {
        Map<String, List<Map.Entry<String, String>>> sections = new LinkedHashMap<>();
        String section = "";
        StringBuilder pending = new StringBuilder();
        for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String line = raw.strip();
            if (pending.length() == 0 && (line.isEmpty() || line.startsWith("#") || line.startsWith(";"))) {
                continue;
            }
            if (line.endsWith("\\")) {
                pending.append(line, 0, line.length() - 1).append(' ');
                continue;
            }
            line = pending.append(line).toString();
            pending.setLength(0);
            if (line.startsWith("[") && line.endsWith("]")) {
                section = line.substring(1, line.length() - 1);
                sections.putIfAbsent(section, new ArrayList<>());
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new IOException(file + ": not a Key=value line: " + raw);
            }
            sections.computeIfAbsent(section, s -> new ArrayList<>())
                    .add(Map.entry(line.substring(0, eq).strip(), line.substring(eq + 1).strip()));
        }
        return new UnitFile(Map.copyOf(sections));
    }

    /** Every value of {@code key} in {@code section}, in file order. */
    List<String> all(String section, String key) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : sections.getOrDefault(section, List.of())) {
            if (e.getKey().equals(key)) {
                out.add(e.getValue());
            }
        }
        return out;
    }

    /** The one value of {@code key}; "" when it is not set; an error when it is set twice. */
    String one(String section, String key) {
        List<String> all = all(section, key);
        if (all.size() > 1) {
            throw new IllegalStateException(key + " is set " + all.size() + " times in [" + section + "]");
        }
        return all.isEmpty() ? "" : all.get(0);
    }

    /** The environment Environment= lines give (simple NAME=value words; quotes as systemd strips them). */
    Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : all("Service", "Environment")) {
            for (String word : words(line)) {
                int eq = word.indexOf('=');
                if (eq > 0) {
                    env.put(word.substring(0, eq), word.substring(eq + 1));
                }
            }
        }
        return env;
    }

    /** ExecStart= as a command line: its words, with systemd's double quotes removed. */
    List<String> execStart() {
        return words("Service", "ExecStart");
    }

    /** A command line such as ExecStart= or ExecReload=: an absolute path (no prefix such as "-") and words. */
    List<String> words(String section, String key) {
        String line = one(section, key);
        if (line.isEmpty() || !line.startsWith("/")) {
            throw new IllegalStateException(key + "= must be an absolute path with no prefix, not '" + line + "'");
        }
        return words(line);
    }

    private static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                any = true;
            } else if (Character.isWhitespace(c) && !quoted) {
                if (any) {
                    out.add(w.toString());
                }
                w.setLength(0);
                any = false;
            } else {
                w.append(c);
                any = true;
            }
        }
        if (any) {
            out.add(w.toString());
        }
        return out;
    }
}
