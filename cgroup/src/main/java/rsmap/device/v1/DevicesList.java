// What a job's v1 devices cgroup allows now (its devices.list), and the writes that bring it to a device
// policy while the job's tasks run: a later task joining and an update.
package rsmap.device.v1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rsmap.device.DevicePolicy;
import rsmap.device.DeviceRule;

/**
 * devices.list of a cgroup (the kernel's Documentation/admin-guide/cgroup-v1/devices.rst), one entry a line:
 * <pre>
 *   a *:* rwm     the cgroup allows every device (default allow; the only line then printed)
 *   c 195:0 rw    in a default-deny cgroup: type, major:minor, the accesses allowed
 *   (empty)       default deny, nothing allowed
 * </pre>
 * Entries map {@code type major:minor} to their accesses.
 */
record DevicesList(Map<String, String> entries) {
    /** The entry of a cgroup that allows everything, as a new cgroup under an unrestricted parent does. */
    static final String ALL = "a *:*";
    static final DevicesList ALLOW_ALL = new DevicesList(Map.of(ALL, "rwm"));

    DevicesList {
        entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries)); // in the kernel's order
    }

    /** One line for one control file: the kernel takes one entry per write. */
    record Write(String file, String line) {
        @Override
        public String toString() {
            return file + " " + line;
        }
    }

    static DevicesList read(Path cgroup) throws IOException {
        return parse(Files.readString(cgroup.resolve("devices.list"), StandardCharsets.US_ASCII));
    }

    /** Lines without the three fields are skipped: the kernel writes none. */
    static DevicesList parse(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.strip().split(" ");
            if (f.length == 3) {
                out.merge(f[0] + " " + f[1], f[2], String::concat);
            }
        }
        return new DevicesList(out);
    }

    boolean allowsAll() {
        return entries.containsKey(ALL);
    }

    /**
     * The writes that make this list {@code policy}, in order; on the way the cgroup never allows a device
     * that neither allows and, from a closed list, never less than what both allow:
     * <ul>
     *   <li>closed from closed: every device of the policy is allowed first (the kernel merges an allow into
     *       an existing entry), then each access listed beyond the policy is denied (in a default-deny cgroup a
     *       deny takes those accesses off the entry, and the entry once none is left). Writing {@code a} to
     *       devices.deny would empty the list first, and a task opening /dev/null at that moment would get
     *       EPERM;</li>
     *   <li>closed from allow-all: {@code a} to devices.deny, then the allows. The kernel switches a cgroup
     *       to default deny only by emptying its list, so for that moment the task is denied every device:
     *       unavoidable, and it fails closed;</li>
     *   <li>open: {@code a} to devices.allow (default allow, exceptions dropped), nothing when it is so
     *       already.</li>
     * </ul>
     */
    List<Write> towards(DevicePolicy policy) {
        List<Write> out = new ArrayList<>();
        if (policy.isOpen()) {
            if (!allowsAll()) {
                out.add(new Write("devices.allow", "a"));
            }
            return out;
        }
        if (allowsAll()) {
            out.add(new Write("devices.deny", "a"));
        }
        Map<String, String> wanted = new LinkedHashMap<>();
        for (DeviceRule r : policy.rules()) {
            out.add(new Write("devices.allow", r.cgroupV1()));
            wanted.merge(r.type() + " " + r.major() + ":" + r.minor(), r.mode().toString(), String::concat);
        }
        if (allowsAll()) {
            return out;
        }
        entries.forEach((entry, access) -> {
            String keep = wanted.getOrDefault(entry, "");
            StringBuilder extra = new StringBuilder();
            for (char c : access.toCharArray()) {
                if (keep.indexOf(c) < 0) {
                    extra.append(c);
                }
            }
            if (extra.length() > 0) {
                out.add(new Write("devices.deny", entry + " " + extra));
            }
        });
        return out;
    }
}
