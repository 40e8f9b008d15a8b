// Reading the files a command names, turning every failure into one clear refusal.
package rsmap.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;

/** Loads the inputs of CLI commands. */
final class Inputs {
    private Inputs() {
    }

    /** The default limits with MAX_RSMAP_IDS from {@code --max-rsmap-ids}, refused when negative. */
    static Limits limits(int maxRsmapIds) throws Refused {
        if (maxRsmapIds < 0) {
            throw new Refused("--max-rsmap-ids must be 0 or more, not " + maxRsmapIds);
        }
        return Limits.DEFAULT.withMaxRsmapIds(maxRsmapIds);
    }

    /** The UTF-8 text of a file, refused when missing, unreadable, too large or not UTF-8. */
    static String text(Path file, Limits limits) throws Refused {
        try {
            if (Files.size(file) > limits.maxInputChars()) {
                throw new Refused(file + ": larger than " + limits.maxInputChars() + " bytes");
            }
            byte[] bytes = Files.readAllBytes(file);
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
            return text.startsWith("\uFEFF") ? text.substring(1) : text; // a byte-order mark is not content
        } catch (NoSuchFileException e) {
            throw new Refused(file + ": no such file");
        } catch (CharacterCodingException e) {
            throw new Refused(file + ": not UTF-8 text");
        } catch (IOException e) {
            throw new Refused(file + ": cannot be read (" + e.getMessage() + ")");
        }
    }

    /** The complex table in {@code file}; a refusal names the file, line and column. */
    static ComplexTable complexes(Path file, Limits limits) throws Refused {
        String text = text(file, limits);
        try {
            return ComplexTable.parse(text, limits);
        } catch (ParseException e) {
            throw new Refused(file + ": " + e.lineAndColumn() + ": " + e.problem());
        }
    }
}
