// Which mount a path is on, read from /proc/self/mountinfo: the proof that a cgroup v1 root is a real
// hierarchy of the devices controller and not plain files.
package rsmap.device.v1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The mount table of proc(5), {@code /proc/<pid>/mountinfo}: one mount a line,
 * <pre>
 *   36 31 0:33 / /sys/fs/cgroup/devices rw,relatime shared:9 - cgroup cgroup rw,devices
 *   (1)(2)(3) (4)(5)                    (6)         (7)      (8)(9)   (10)   (11)
 * </pre>
 * (1) mount id, (2) parent id, (4) root within the filesystem, (5) mount point (octal escapes for space,
 * tab, newline, backslash), (6) mount options, (7) optional fields ended by (8) "-", (9) filesystem
 * type, (10) source, (11) super options: for cgroup v1, the controllers the hierarchy binds.
 */
final class Mounts {
    /** One line of mountinfo. */
    record Mount(int id, int parent, Path point, String type, List<String> superOptions) {
        Mount {
            superOptions = List.copyOf(superOptions);
        }
    }

    private final List<Mount> mounts;

    private Mounts(List<Mount> mounts) {
        this.mounts = List.copyOf(mounts);
    }

    static Mounts read(Path mountinfo) throws IOException {
        return parse(Files.readString(mountinfo, StandardCharsets.UTF_8));
    }

    /** Lines that do not have the fields of proc(5) are skipped: the kernel writes none. */
    static Mounts parse(String text) {
        List<Mount> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.strip().split(" ");
            int dash = Arrays.asList(f).indexOf("-");
            if (f.length < 10 || dash < 6 || dash + 3 >= f.length) {
                continue;
            }
            try {
                out.add(new Mount(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Path.of(unescape(f[4])), f[dash + 1],
                        List.of(f[dash + 3].split(","))));
            } catch (NumberFormatException | java.nio.file.InvalidPathException e) {
                // not a mountinfo line
            }
        }
        return new Mounts(out);
    }

    /**
     * The mount that {@code path} (absolute, symlinks resolved) is on: from the top mount at {@code /},
     * down through the mounts on each longer prefix of the path whose parent is the mount found so far,
     * and up each stack of mounts on one point. A mount hidden by a later one on a shorter prefix (a tmpfs
     * over /sys/fs/cgroup hides /sys/fs/cgroup/devices) is not reached, as the kernel does not reach it.
     */
    Optional<Mount> of(Path path) {
        Optional<Mount> current = top(Path.of("/"), null);
        Path prefix = Path.of("/");
        for (Path name : path) {
            if (current.isEmpty()) {
                break;
            }
            prefix = prefix.resolve(name);
            Optional<Mount> below = top(prefix, current.get());
            if (below.isPresent()) {
                current = below;
            }
        }
        return current;
    }

    /**
     * The topmost mount on {@code point} whose parent is {@code under} (null: the namespace's root, whose
     * parent lies outside this table), then up each mount stacked on the same point.
     */
    private Optional<Mount> top(Path point, Mount under) {
        Optional<Mount> found = mounts.stream().filter(m -> m.point().equals(point)
                && (under == null ? mounts.stream().noneMatch(p -> p.id() == m.parent()) : m.parent() == under.id()))
                .findFirst();
        while (found.isPresent()) {
            Mount base = found.get();
            Optional<Mount> over = mounts.stream().filter(m -> m.parent() == base.id() && m.point().equals(point))
                    .findFirst();
            if (over.isEmpty()) {
                break;
            }
            found = over;
        }
        return found;
    }

    /** proc(5) escapes space, tab, newline and backslash in paths as three octal digits. */
    static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length()
                    && field.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7')) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
