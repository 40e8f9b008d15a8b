// Whom a client of rsmapd believes: the server the kernel says runs as root, as daemon_user of the root-owned
// installed rsmapd.conf, or - where none is installed (the README's tour, all as one user) - as this user.
// The hooks' rule (rsmap-client.c, rsmap_check_server) for the rsmap command: .
package rsmap.wire;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import rsmap.Continuation;

/**
 * Anyone can bind a socket where {@code RSMAP_SOCKET} or {@code --socket} points, so a client believes the
 * kernel's uid of the server (SO_PEERCRED), never the path: root; the uid of {@code daemon_user} in the
 * installed configuration (default root), which counts only as a regular file of root's that no one else
 * may write; and, where no configuration is installed, the client's own user. Names resolve through
 * /etc/passwd, as in the static hooks, where NSS modules cannot be loaded.
 */
public final class TrustedServer {
    /** The installed configuration, as the hooks have it compiled in (RSMAP_SYSCONF). */
    public static final Path INSTALLED = Path.of("/etc/rsmap/rsmapd.conf");
    /**
     * Names another configuration (rsmap(1), RSMAP_JAVA_OPTS: a test's, a relocated installation's); set by the
     * JVM's launcher, never read from the environment.
     */
    public static final String PROPERTY = "rsmap.sysconf";
    private static final Path PASSWD = Path.of("/etc/passwd");
    private static final long MAX_CONF = 16 << 20;

    private final Path conf;
    private final long ownUid;

    TrustedServer(Path conf, long ownUid) {
        this.conf = conf;
        this.ownUid = ownUid;
    }

    /** The rule of this host: {@link #INSTALLED} (or {@link #PROPERTY}) and this process's real uid. */
    public static TrustedServer installed() {
        return new TrustedServer(Path.of(System.getProperty(PROPERTY, INSTALLED.toString())),
                new com.sun.security.auth.module.UnixSystem().getUid());
    }

    /** Empty when a server running as {@code uid} may answer on {@code socket}; else why not, in one line. */
    public Optional<String> refusal(Path socket, long uid) {
        if (uid == 0) {
            return Optional.empty(); // rsmapd runs as root (packaging's unit)
        }
        String user;
        try {
            Optional<String> configured = read();
            if (configured.isEmpty()) {
                return uid == ownUid ? Optional.empty() : Optional.of("not trusting the server at " + socket
                        + ": it runs as uid " + uid + ", not as root or as this process's user (uid " + ownUid
                        + "; no " + conf + " installed)");
            }
            user = configured.get();
        } catch (Untrusted e) {
            return Optional.of("not trusting the server at " + socket + " (uid " + uid + "): " + e.getMessage());
        }
        if (!user.equals("root")) {
            Optional<Long> trusted = passwdUid(user);
            if (trusted.isEmpty()) {
                return Optional.of("not trusting the server at " + socket + " (uid " + uid + "): daemon_user '" + user
                        + "' of " + conf + " is not in " + PASSWD);
            }
            if (trusted.get() == uid) {
                return Optional.empty();
            }
        }
        return Optional.of("not trusting the server at " + socket + ": it runs as uid " + uid
                + ", not as root or daemon_user '" + user + "' of " + conf);
    }

    private static final class Untrusted extends Exception {
        private static final long serialVersionUID = 1L;

        Untrusted(String why) {
            super(why, null, false, false);
        }
    }

    /** daemon_user of the installed configuration ("root" when unset); empty when there is none. */
    private Optional<String> read() throws Untrusted {
        PosixFileAttributes a;
        String text;
        try {
            a = Files.readAttributes(conf, PosixFileAttributes.class);
            String bad = !a.isRegularFile() ? "it is not a regular file"
                    : (Integer) Files.getAttribute(conf, "unix:uid") != 0 ? "it is not owned by root"
                    : writableByOthers(a.permissions()) ? "it is writable by group or others"
                    : a.size() > MAX_CONF ? "it is larger than 16 MiB" : null;
            if (bad != null) {
                throw new Untrusted(conf + " cannot say who may serve: " + bad);
            }
            text = new String(Files.readAllBytes(conf), StandardCharsets.ISO_8859_1); // bytes, as the hooks read them
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException | UnsupportedOperationException e) {
            throw new Untrusted("cannot read " + conf + " (" + e.getMessage() + "), which says who may serve");
        }
        try {
            return Optional.of(daemonUser(text).orElse("root"));
        } catch (IllegalArgumentException e) {
            throw new Untrusted(conf + " " + e.getMessage());
        }
    }

    private static boolean writableByOthers(Set<PosixFilePermission> p) {
        return p.contains(PosixFilePermission.GROUP_WRITE) || p.contains(PosixFilePermission.OTHERS_WRITE);
    }

    /**
     * daemon_user of rsmapd.conf's text as rsmapd reads it (rsmap.daemon.config.Config): backslash-newlines joined
     * first (a comment or a complex_values continued over a {@code daemon_user =} line swallows it), then
     * {@code #} comments, {@code key = value} trimmed, keys in any case. Empty when unset.
     *
     * @throws IllegalArgumentException set twice, empty (rsmapd refuses such a file too) or longer than the
     *     hooks read (255 bytes)
     */
    static Optional<String> daemonUser(String text) {
        String joined = Continuation.of(text).joined();
        String found = null;
        for (String line : joined.split("\n", -1)) {
            int hash = line.indexOf('#');
            String content = hash >= 0 ? line.substring(0, hash) : line;
            int eq = content.indexOf('=');
            if (eq < 0 || !content.substring(0, eq).strip().toLowerCase(Locale.ROOT).equals("daemon_user")) {
                continue;
            }
            String value = content.substring(eq + 1).strip();
            if (found != null || value.isEmpty() || value.length() >= 256 || value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("sets daemon_user twice, empty or too long");
            }
            found = value;
        }
        return Optional.ofNullable(found);
    }

    /** The uid of a user of /etc/passwd (not NSS: the hooks cannot use it, and the rule must be the same). */
    private static Optional<Long> passwdUid(String user) {
        try {
            for (String line : Files.readAllLines(PASSWD, StandardCharsets.ISO_8859_1)) {
                String[] f = line.split(":", -1);
                if (f.length >= 3 && f[0].equals(user) && f[2].matches("[0-9]{1,10}")) {
                    return Optional.of(Long.parseLong(f[2]));
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
