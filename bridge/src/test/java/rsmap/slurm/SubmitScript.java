// The test cluster's job_submit.lua (the packaged one, beside slurm.conf) and what it asks the authority with:
// the Lua module rsmap_place.so inside slurmctld, or a place command run per submission.
package rsmap.slurm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.TreeMap;

/**
 * slurmctld starts with {@code RSMAP_PLACE_MODULE} = bridge/target/rsmap_place.so and no
 * {@code RSMAP_PLACE_COMMAND}: the module path. {@link #use} rewrites the script so that it reads other
 * settings (a test's own lines before the packaged script put them in place of slurmctld's environment, which
 * is fixed at its start); slurmctld loads a script again when its mtime moved on.
 */
final class SubmitScript {
    static final Path MODULE = Path.of("target", "rsmap_place.so").toAbsolutePath();
    private final Path dir;
    private final Path script;
    private final Path authority;

    SubmitScript(Path dir, Path authority) {
        this.dir = dir;
        this.script = dir.resolve("job_submit.lua");
        this.authority = authority;
    }

    /** slurmctld's environment for job_submit.lua. */
    Map<String, String> environment() {
        return Map.of("RSMAP_PLACE_MODULE", MODULE.toString(), "RSMAP_AUTHORITY_SOCKET", authority.toString());
    }

    /**
     * job_submit.lua as packaged, and a fake place command ({@link #command()}) that records its arguments
     * in {@link #placeArgs()} and injects two faults ("unparsable": exit 2 with a column; "unreachable": exit
     * 1); anything else goes to the real C rsmap-place and the authority, to which this node registered
     * cpu_speed=2.4GHz.
     */
    void write() throws IOException {
        use(Map.of());
        String why = "filter: column 11: expected ==, !=, <, <=, >, >= or in after 'cpu_speed', found 'u'";
        Files.writeString(dir.resolve("unparsable.out"), "{\"error\":\"rsmapd: " + why + "\",\"category\":\"refused\"}\n");
        Files.writeString(dir.resolve("unparsable.err"), "error: rsmapd: " + why + "\n");
        Files.writeString(command(), String.join("\n",
                "#!/bin/sh",
                "printf '%s\\n' \"$*\" >> " + placeArgs(),
                "cat /proc/$PPID/comm >> " + placeParent(), // who waits for it: slurmctld itself, no shell between
                "filter=",
                "prev=; for a in \"$@\"; do [ \"$prev\" = --filter ] && filter=$a; prev=$a; done", // \"$@\" kept for exec
                "case $filter in",
                // what rsmap place --json says of the authority's ERROR: the category for the script, the line for people
                "*unparsable*) cat " + dir.resolve("unparsable.out") + "; cat " + dir.resolve("unparsable.err")
                        + " >&2; exit 2 ;;",
                "*unreachable*) echo 'error: authority unreachable' >&2; exit 1 ;;",
                "esac",
                // Everything else is the real PLACE of the authority, about this node's registered attributes,
                // through the C client job_submit.lua runs by default.
                "exec " + Path.of("target", "rsmap-place").toAbsolutePath() + " \"$@\"") + "\n");
        Files.setPosixFilePermissions(command(), PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /**
     * job_submit.lua reading {@code settings} in place of slurmctld's environment (the others from it), loaded
     * again at the next submission: e.g. {@code RSMAP_PLACE_COMMAND} = {@link #command()} for the command path.
     */
    void use(Map<String, String> settings) throws IOException {
        StringBuilder lua = new StringBuilder();
        if (!settings.isEmpty()) {
            lua.append("-- the test's settings, in place of slurmctld's environment\n"
                    + "local settings, getenv = {}, os.getenv\n");
            new TreeMap<>(settings).forEach((k, v) -> lua.append("settings[").append(quoted(k)).append("] = ")
                    .append(quoted(v)).append("\n"));
            lua.append("os.getenv = function(k) if settings[k] ~= nil then return settings[k] end return getenv(k) end\n");
        }
        lua.append(Files.readString(Path.of("src", "main", "scripts", "job_submit.lua")));
        FileTime before = Files.exists(script) ? Files.getLastModifiedTime(script) : null;
        Files.writeString(script, lua);
        // slurmctld compares whole seconds: one past the last load
        if (before != null && Files.getLastModifiedTime(script).toMillis() / 1000 <= before.toMillis() / 1000) {
            Files.setLastModifiedTime(script, FileTime.fromMillis((before.toMillis() / 1000 + 1) * 1000));
        }
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    /** The fake place command. */
    Path command() {
        return dir.resolve("fake-rsmap-place");
    }

    /** The name of the process that started each call of the fake place command, one call a line. */
    Path placeParent() {
        return dir.resolve("place.parent");
    }

    /** The arguments of every call of the fake place command, one call a line. */
    Path placeArgs() {
        return dir.resolve("place.args");
    }
}
