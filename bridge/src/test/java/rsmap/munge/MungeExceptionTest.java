// The kinds of munge's error numbers (munge.h, enum munge_err), and the authenticator's line for each kind.
package rsmap.munge;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import rsmap.munge.MungeException.Kind;

class MungeExceptionTest {
    /** munge_err_t, its name in munge.h, and the kind a caller acts on. */
    record Row(int number, String name, Kind kind) {
    }

    static final Row[] ROWS = {
        new Row(1, "EMUNGE_SNAFU", Kind.OTHER),
        new Row(2, "EMUNGE_BAD_ARG", Kind.OTHER),
        new Row(3, "EMUNGE_BAD_LENGTH", Kind.OTHER),
        new Row(4, "EMUNGE_OVERFLOW", Kind.OTHER),
        new Row(5, "EMUNGE_NO_MEMORY", Kind.OTHER),
        new Row(6, "EMUNGE_SOCKET", Kind.SOCKET),
        new Row(7, "EMUNGE_TIMEOUT", Kind.OTHER),
        // A forger's bytes fail any of munged's format checks before the MAC: all INVALID.
        new Row(8, "EMUNGE_BAD_CRED", Kind.INVALID),
        new Row(9, "EMUNGE_BAD_VERSION", Kind.INVALID),
        new Row(10, "EMUNGE_BAD_CIPHER", Kind.INVALID),
        new Row(11, "EMUNGE_BAD_MAC", Kind.INVALID),
        new Row(12, "EMUNGE_BAD_ZIP", Kind.INVALID),
        new Row(13, "EMUNGE_BAD_REALM", Kind.INVALID),
        new Row(14, "EMUNGE_CRED_INVALID", Kind.INVALID),
        new Row(15, "EMUNGE_CRED_EXPIRED", Kind.EXPIRED),
        new Row(16, "EMUNGE_CRED_REWOUND", Kind.REWOUND),
        new Row(17, "EMUNGE_CRED_REPLAYED", Kind.REPLAYED),
        new Row(18, "EMUNGE_CRED_UNAUTHORIZED", Kind.UNAUTHORIZED),
        new Row(19, "(a newer munge's)", Kind.OTHER),
        new Row(MungeException.NOT_MUNGE, "(libmunge missing)", Kind.OTHER),
    };

    @Test
    void kindOf_everyErrorNumber_isItsKind() {
        for (Row r : ROWS) {
            assertThat(Kind.of(r.number())).as(r.name()).isEqualTo(r.kind());
            MungeException e = new MungeException(r.number(), "m");
            assertThat(e.kind()).as(r.name()).isEqualTo(r.kind());
            assertThat(e.errorNumber()).isEqualTo(r.number());
        }
    }

    /** Every kind has one line, and only SOCKET and OTHER (munged's trouble, not the peer's) carry munge's text. */
    @Test
    void refusal_everyKind_isOneLine() {
        for (Kind k : Kind.values()) {
            String line = MungeAuthenticator.refusal(new MungeException(k, 0, "munge decode: text"));
            assertThat(line).as(k.name()).startsWith("munge credential ").doesNotContain("\n");
            assertThat(line.contains("text")).as(k.name()).isEqualTo(k == Kind.SOCKET || k == Kind.OTHER);
        }
    }
}
