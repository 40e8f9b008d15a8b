// A credential libmunge would not make or accept, or a munged it could not reach: what kind, and munge's word.
package rsmap.munge;

/**
 * One failure of {@link Munge}: its {@link #kind()} for callers that decide, and {@link #errorNumber()}, the
 * {@code munge_err_t} of munge.h, for the log. The message is one line: what was asked, then libmunge's
 * text (munge_ctx_strerror where it says more than munge_strerror).
 */
public final class MungeException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Not a munge_err_t: the failure happened before libmunge was asked (it could not be loaded). */
    public static final int NOT_MUNGE = -1;

    /** What went wrong, as a caller acts on it. */
    public enum Kind {
        /** Not a credential of this key: forged, altered, garbled, or made by a munged with another key. */
        INVALID,
        /** Decoded after its time-to-live. */
        EXPIRED,
        /** Encoded in the future as this munged's clock sees it (clocks apart). */
        REWOUND,
        /** Decoded before: every credential is good once (munged's replay cache). */
        REPLAYED,
        /** Restricted by its encoder to another uid or gid than the decoder's. */
        UNAUTHORIZED,
        /** munged could not be reached on its socket. */
        SOCKET,
        /** Anything else: libmunge missing, out of memory, an argument munged refused. */
        OTHER;

        /** The kind of munge error number {@code e} (munge.h, enum munge_err). */
        static Kind of(int e) {
            return switch (e) {
                case Munge.EMUNGE_SOCKET -> SOCKET;
                // Bad format, version, cipher, MAC, compression or realm are what a forger's bytes give too.
                case Munge.EMUNGE_BAD_CRED, Munge.EMUNGE_BAD_VERSION, Munge.EMUNGE_BAD_CIPHER, Munge.EMUNGE_BAD_MAC,
                        Munge.EMUNGE_BAD_ZIP, Munge.EMUNGE_BAD_REALM, Munge.EMUNGE_CRED_INVALID -> INVALID;
                case Munge.EMUNGE_CRED_EXPIRED -> EXPIRED;
                case Munge.EMUNGE_CRED_REWOUND -> REWOUND;
                case Munge.EMUNGE_CRED_REPLAYED -> REPLAYED;
                case Munge.EMUNGE_CRED_UNAUTHORIZED -> UNAUTHORIZED;
                default -> OTHER;
            };
        }
    }

    private final Kind kind;
    private final int errorNumber;

    MungeException(Kind kind, int errorNumber, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.errorNumber = errorNumber;
    }

    MungeException(int errorNumber, String message) {
        this(Kind.of(errorNumber), errorNumber, message);
    }

    public Kind kind() {
        return kind;
    }

    /** munge.h's {@code munge_err_t} (e.g. 17, EMUNGE_CRED_REPLAYED), or {@link #NOT_MUNGE}. */
    public int errorNumber() {
        return errorNumber;
    }
}
