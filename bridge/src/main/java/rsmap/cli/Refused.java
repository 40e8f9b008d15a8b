// Bad input met by a CLI command: printed as one "error:" line, exit code 2.
package rsmap.cli;

/**
 * The input of a command was refused; the message is the whole line after "error: ". A detail (the
 * input with a caret under the column) may follow that line for a human reader.
 */
final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    private final String detail;

    Refused(String message) {
        this(message, "");
    }

    Refused(String message, String detail) {
        super(message, null, false, false);
        this.detail = detail;
    }

    /** Lines printed after the error line, or "". */
    String detail() {
        return detail;
    }
}
