// User and group names and ids from /etc/passwd and /etc/group (passwd(5), group(5)), for MungeAuthenticator.
package rsmap.munge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The local account files, read on each question (a few per connection at most, and an edited file is
 * seen at once). Only the daemon user's uid falls back to NSS ({@code id -u}), once at start-up: sites
 * with LDAP or sssd accounts have no line for it here. The names of other ids are only for messages and
 * the session's peer; where the files do not know one, the caller prints the number.
 */
final class Accounts {
    static final Accounts SYSTEM = new Accounts(Path.of("/etc/passwd"), Path.of("/etc/group"));

    private final Path passwd;
    private final Path group;

    Accounts(Path passwd, Path group) {
        this.passwd = passwd;
        this.group = group;
    }

    /** The uid of user {@code name}: its passwd line, else what {@code id -u} says (NSS); empty when unknown. */
    OptionalLong uid(String name) {
        for (String[] f : entries(passwd)) {
            if (f[0].equals(name)) {
                return id(f[2]);
            }
        }
        return idCommand(name);
    }

    /** The name of user {@code uid} in the passwd file. */
    Optional<String> user(long uid) {
        return name(passwd, uid);
    }

    /** The name of group {@code gid} in the group file. */
    Optional<String> group(long gid) {
        return name(group, gid);
    }

    private static Optional<String> name(Path file, long id) {
        for (String[] f : entries(file)) {
            if (id(f[2]).orElse(-1) == id) {
                return Optional.of(f[0]);
            }
        }
        return Optional.empty();
    }

    /** The colon-separated fields of each line with at least name, password and id; NIS "+" lines skipped. */
    private static List<String[]> entries(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8).stream().map(l -> l.split(":", -1))
                    .filter(f -> f.length >= 3 && !f[0].isEmpty() && !f[0].startsWith("+") && !f[0].startsWith("-"))
                    .toList();
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file + ": " + e.getMessage(), e);
        }
    }

    private static OptionalLong id(String field) {
        try {
            long id = Long.parseLong(field.strip());
            return id >= 0 && id <= 0xffff_ffffL ? OptionalLong.of(id) : OptionalLong.empty();
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private static OptionalLong idCommand(String name) {
        try {
            Process p = new ProcessBuilder("id", "-u", "--", name).redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return OptionalLong.empty();
            }
            return p.exitValue() == 0 ? id(out) : OptionalLong.empty();
        } catch (IOException e) {
            return OptionalLong.empty(); // no id(1): the passwd file was the only word
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalLong.empty();
        }
    }
}
