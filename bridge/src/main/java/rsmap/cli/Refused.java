// Bad input met by a CLI command: printed as one "error:" line, exit code 2.
package rsmap.cli;

/** The input of a command was refused; the message is the whole line after "error: ". */
final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
        super(message, null, false, false);
    }
}
