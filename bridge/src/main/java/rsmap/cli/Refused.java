// A CLI command that cannot do its work: printed as one "error:" line, exit code 2 (refused input) or 1
// (rsmapd cannot be reached, does not answer, or answers that it cannot serve now).
package rsmap.cli;

import java.util.Optional;
import rsmap.wire.Category;
import rsmap.wire.Client;

/**
 * The input of a command was refused (exit 2), or the daemon could not serve it (exit 1: the README's
 * "internal fault", every {@code rsmap} command alike); the message is the whole line after "error: ". A
 * detail (the input with a caret under the column) may follow that line for a human reader.
 */
final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    /** Refused input. */
    static final int INPUT = 2;
    /** rsmapd unreachable, silent, untrusted, or its ERROR is unavailable or internal. */
    static final int FAULT = 1;

    private final String detail;
    private final int exit;
    /** The category of rsmapd's ERROR, unavailable when it could not be asked; empty for the command's own checks. */
    private final transient Optional<Category> category;

    Refused(String message) {
        this(message, "");
    }

    Refused(String message, String detail) {
        this(message, detail, INPUT, Optional.empty());
    }

    private Refused(String message, String detail, int exit, Optional<Category> category) {
        super(message, null, false, false);
        this.detail = detail;
        this.exit = exit;
        this.category = category;
    }

    /** rsmapd could not be asked: unreachable, not trusted, lost, or no answer within the timeout. */
    static Refused fault(String message) {
        return new Refused(message, "", FAULT, Optional.of(Category.UNAVAILABLE));
    }

    /** Refused by the command itself, for a reason a script should read as rsmapd's category refused. */
    static Refused refusedInput(String message) {
        return new Refused(message, "", INPUT, Optional.of(Category.REFUSED));
    }

    /**
     * rsmapd's ERROR: by its category (docs/protocol.md, "Error categories"), never its words - busy,
     * unavailable and internal may pass (1), refused, malformed and denied are the command's (2); none (an
     * older rsmapd): 2.
     */
    static Refused of(Client.Refusal e) {
        Optional<Category> c = e.category();
        boolean fault = c.isPresent() && (c.get() == Category.BUSY || c.get() == Category.UNAVAILABLE
                || c.get() == Category.INTERNAL);
        return new Refused("rsmapd: " + e.getMessage(), "", fault ? FAULT : INPUT, c);
    }

    /** rsmapd's category for a script to decide by (rsmap place --json, --shell); empty for a usage error. */
    Optional<Category> category() {
        return category;
    }

    /** The exit code: {@link #INPUT} or {@link #FAULT}. */
    int exit() {
        return exit;
    }

    /** Lines printed after the error line, or "". */
    String detail() {
        return detail;
    }
}
