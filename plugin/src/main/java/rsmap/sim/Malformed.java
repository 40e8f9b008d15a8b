// A malformed line of a simulate script: answered {"ok":false,"error":"line N: ..."}, and the run goes on.
package rsmap.sim;

final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String message) {
        super(message, null, false, false);
    }
}
