// Whether rsmapd may trust its state directory, as sshd's StrictModes trusts a home directory: it and
// every directory above it owned by root or the daemon user and writable by nobody else.
package rsmap.daemon.records;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * rsmapd runs as root and writes its lock, journal and the jobs' environment files in {@code state_dir}.
 * A directory another user owns or may write (a {@code /tmp/rsmap} that user created first) lets that
 * user plant links that root then follows. So, before anything in it is opened: the state directory must
 * not be a symbolic link; it and each directory above it (resolved) must be owned by root, the daemon
 * user or the user rsmapd runs as (one running it for themselves, as in the README's tour), and writable by neither group nor others - except a directory above it that is root's and has the
 * sticky bit ({@code /tmp}: others may add names there but not replace or remove another's). A missing
 * state directory is created, mode 0711, in a parent that passes. Files in it are then opened with
 * {@code O_NOFOLLOW} ({@link LinkOption#NOFOLLOW_LINKS}) by their owners (lock, journal, env files).
 */
public final class StateDirTrust {
    private static final int STICKY = 01000;

    private StateDirTrust() {
    }

    /** Checks {@code stateDir} (creating it when missing); the one-line reason as an IOException when not. */
    public static void check(Path stateDir, String daemonUser) throws IOException {
        Path dir = stateDir.toAbsolutePath().normalize();
        int daemonUid = uidOf(daemonUser);
        int self = selfUid(); // a user running rsmapd for themselves (the README's tour) trusts their own
        if (Files.isSymbolicLink(dir)) {
            Map<String, Object> a = Files.readAttributes(dir, "unix:uid,owner", LinkOption.NOFOLLOW_LINKS);
            throw refused(dir, "is a symbolic link (to " + Files.readSymbolicLink(dir) + ", owned by " + a.get("owner")
                    + ")");
        }
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.getParent();
            if (parent != null) {
                check(parent.toRealPath(), daemonUid, self, true, dir);
            }
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        }
        Path real = dir.toRealPath();
        check(real, daemonUid, self, false, dir);
        for (Path p = real.getParent(); p != null; p = p.getParent()) {
            check(p, daemonUid, self, true, dir);
        }
    }

    private static void check(Path p, int daemonUid, int self, boolean above, Path stateDir) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:uid,mode,owner", LinkOption.NOFOLLOW_LINKS);
        int uid = (Integer) a.get("uid");
        int mode = (Integer) a.get("mode");
        String where = p.equals(stateDir) ? "" : " (above state_dir " + stateDir + ")";
        if (uid != 0 && uid != daemonUid && uid != self) {
            throw refused(p, "is owned by " + a.get("owner") + " (uid " + uid + "), not root or the daemon user" + where);
        }
        if ((mode & 022) != 0 && !(above && uid == 0 && (mode & STICKY) != 0)) {
            throw refused(p, "is writable by " + ((mode & 020) != 0 ? "its group" : "others") + " (mode "
                    + String.format("%04o", mode & 07777) + ", owner " + a.get("owner") + ")" + where);
        }
    }

    private static IOException refused(Path p, String why) {
        return new IOException("state_dir: " + p + " " + why + "; refusing to trust it (as sshd's StrictModes): "
                + "make it root's, not writable by group or others");
    }

    /** The uid rsmapd runs as (the owner of /proc/self), 0 when it cannot be read. */
    private static int selfUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
    }

    /** The uid of {@code user}, -1 when this host has no such user (then only root's is trusted). */
    private static int uidOf(String user) {
        if (user.equals("root")) {
            return 0;
        }
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length > 2 && f[0].equals(user)) {
                    return Integer.parseInt(f[2]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
