// Reading a configuration file as text, so that every way it can be unreadable is one line naming the file;
// and a value of it shown in an error line.
package rsmap.daemon.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import rsmap.Hex;

/**
 * A careless admin's slips (a folder named instead of the file, a file in Latin-1, a file root cannot
 * read) stop the daemon with {@code FILE: line N: why} or {@code FILE: why}, never the JDK's bare
 * "Input length = 3" or "Is a directory".
 */
public final class ConfigText {
    /** Larger than any configuration an admin writes; a bigger file is a mistake (a log, a device). */
    static final int MAX_BYTES = 16 << 20;

    private ConfigText() {
    }

    public static String read(Path file) throws IOException {
        if (Files.isDirectory(file)) {
            throw new IOException(file + ": is a directory, not a configuration file");
        }
        byte[] bytes;
        try {
            if (Files.exists(file) && !Files.isRegularFile(file)) {
                throw new IOException(file + ": is not a regular file");
            }
            if (Files.exists(file) && Files.size(file) > MAX_BYTES) {
                throw new IOException(file + ": is larger than " + (MAX_BYTES >> 20) + " MiB; not a configuration file");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        } catch (AccessDeniedException e) {
            throw new IOException(file + ": permission denied", e);
        } catch (IOException e) {
            throw e.getMessage() != null && e.getMessage().startsWith(file.toString()) ? e
                    : new IOException(file + ": cannot read: " + e.getMessage(), e);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new IOException(file + ": line " + lineOfBadByte(bytes) + ": not valid UTF-8", e);
        }
    }

    /** The line (from 1) holding the first byte that does not decode as UTF-8. */
    static int lineOfBadByte(byte[] bytes) {
        var decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        int line = 1;
        int start = 0;
        for (int i = 0; i <= bytes.length; i++) {
            if (i == bytes.length || bytes[i] == '\n') {
                try {
                    decoder.reset().decode(ByteBuffer.wrap(bytes, start, i - start));
                } catch (CharacterCodingException e) {
                    return line;
                }
                line++;
                start = i + 1;
            }
        }
        return line - 1;
    }

    /** A value as an error line can show it: control characters escaped, cut at 80 characters. */
    public static String printable(String v) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < v.length() && b.length() < 80; i++) {
            char c = v.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                Hex.append(b.append("\\x"), c, 2);
            } else {
                b.append(c);
            }
        }
        return b.length() < 80 ? b.toString() : b + "...";
    }

    /** Where {@code key} is set in {@code file} (its line, where it has one), for an error line. */
    public static String where(Config config, Path file, String key) {
        String name = file == null ? "rsmapd.conf" : file.toString();
        int line = config.lineOf(key);
        return line > 0 ? name + ": line " + line + ": " + key : name + ": " + key;
    }
}
