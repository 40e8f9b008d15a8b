// MUNGE credentials: encode and decode through libmunge.so.2 and a munged on its Unix socket.
package rsmap.munge;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.NativeLongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import rsmap.Hex;

/**
 * A client of one munged. MUNGE (https://dun.github.io/munge/) proves who made a credential: munged seals
 * the encoding process's uid and gid, the time, a time-to-live and a payload with the key every host
 * shares; any munged with that key decodes it once (a replay cache) within its TTL, and nothing else can
 * make one. libmunge is the protocol to munged; it is bound here through JNA, from munge.h of MUNGE 0.5
 * (no header or -dev package needed), the numbers below copied from its enums.
 *
 * <p>Thread-safe: every call makes, uses and destroys its own {@code munge_ctx} (munge.h: a context is
 * not to be shared between threads), and frees with libc's {@code free} what libmunge allocated for it
 * (the credential of an encode, the payload of a decode, on failure too).
 */
public final class Munge {
    /** munged's own default socket (MUNGE_SOCKET_NAME of a Debian or RPM build, --localstatedir=/var). */
    public static final Path DEFAULT_SOCKET = Path.of("/run/munge/munge.socket.2");
    /** The library's soname: the unversioned libmunge.so comes only with libmunge-dev. */
    static final String LIBRARY = "libmunge.so.2";

    // munge.h, enum munge_err (munge_err_t).
    static final int EMUNGE_SUCCESS = 0;
    static final int EMUNGE_SNAFU = 1;
    static final int EMUNGE_BAD_ARG = 2;
    static final int EMUNGE_BAD_LENGTH = 3;
    static final int EMUNGE_NO_MEMORY = 5;
    static final int EMUNGE_SOCKET = 6;
    static final int EMUNGE_BAD_CRED = 8;
    static final int EMUNGE_BAD_VERSION = 9;
    static final int EMUNGE_BAD_CIPHER = 10;
    static final int EMUNGE_BAD_MAC = 11;
    static final int EMUNGE_BAD_ZIP = 12;
    static final int EMUNGE_BAD_REALM = 13;
    static final int EMUNGE_CRED_INVALID = 14;
    static final int EMUNGE_CRED_EXPIRED = 15;
    static final int EMUNGE_CRED_REWOUND = 16;
    static final int EMUNGE_CRED_REPLAYED = 17;
    static final int EMUNGE_CRED_UNAUTHORIZED = 18;

    // munge.h, enum munge_opt: the argument after each is an int, a time_t* (get) and a char* (set).
    private static final int MUNGE_OPT_TTL = 4;
    private static final int MUNGE_OPT_ENCODE_TIME = 6;
    private static final int MUNGE_OPT_SOCKET = 8;

    /**
     * What a credential proves: who encoded it ({@code uid}, {@code gid} of the encoding process), the
     * payload sealed with it, when it was encoded and for how long it is good (as munged bounded it).
     */
    public record Credential(long uid, long gid, byte[] payload, Instant encoded, Duration ttl) {
        public Credential {
            payload = payload.clone();
            Objects.requireNonNull(encoded, "encoded");
            Objects.requireNonNull(ttl, "ttl");
        }

        /** A copy: the record stays immutable. */
        @Override
        public byte[] payload() {
            return payload.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Credential c && uid == c.uid && gid == c.gid && Arrays.equals(payload, c.payload)
                    && encoded.equals(c.encoded) && ttl.equals(c.ttl);
        }

        @Override
        public int hashCode() {
            return Objects.hash(uid, gid, Arrays.hashCode(payload), encoded, ttl);
        }

        @Override
        public String toString() {
            return "Credential[uid=" + uid + ", gid=" + gid + ", payload=" + payload.length + " bytes, encoded="
                    + encoded + ", ttl=" + ttl + "]";
        }
    }

    /** munge.h's functions; {@code munge_ctx_t} is an opaque pointer, uid_t and gid_t 32-bit unsigned. */
    interface LibMunge extends Library {
        int munge_encode(PointerByReference cred, Pointer ctx, byte[] buf, int len);

        int munge_decode(String cred, Pointer ctx, PointerByReference buf, IntByReference len, IntByReference uid,
                IntByReference gid);

        String munge_strerror(int e);

        Pointer munge_ctx_create();

        void munge_ctx_destroy(Pointer ctx);

        String munge_ctx_strerror(Pointer ctx);

        /** Variadic in C: JNA passes the arguments by the variadic convention. */
        int munge_ctx_get(Pointer ctx, int opt, Object... value);

        int munge_ctx_set(Pointer ctx, int opt, Object... value);
    }

    interface LibC extends Library {
        void free(Pointer p);
    }

    /** Loaded on the first {@link #open}: a daemon without an authority never maps libmunge. */
    private static final class Lib {
        static final LibMunge MUNGE;
        static final LibC C;
        /** Why libmunge is not there, or "". */
        static final String MISSING;

        static {
            LibMunge m = null;
            LibC c = null;
            String why = "";
            try {
                m = Native.load(LIBRARY, LibMunge.class);
                c = Native.load("c", LibC.class);
            } catch (LinkageError | RuntimeException e) {
                // JNA's message: "Unable to load library ...:", then dlopen's word on the next line.
                List<String> lines = String.valueOf(e.getMessage()).lines().filter(l -> !l.isBlank()).toList();
                String said = lines.isEmpty() ? e.toString() : lines.get(Math.min(1, lines.size() - 1));
                why = LIBRARY + " cannot be loaded (" + said + "); install "
                        + "MUNGE's library (Debian: libmunge2, RPM: munge-libs)";
                m = null;
                c = null;
            }
            MUNGE = m;
            C = c;
            MISSING = why;
        }
    }

    private final Path socket;
    private final LibMunge munge;
    private final LibC libc;

    private Munge(Path socket, LibMunge munge, LibC libc) {
        this.socket = socket;
        this.munge = munge;
        this.libc = libc;
    }

    /**
     * A client of the munged listening on {@code socket}; munged need not run yet (each call connects).
     * Fails with kind OTHER when libmunge cannot be loaded.
     */
    public static Munge open(Path socket) throws MungeException {
        Objects.requireNonNull(socket, "socket");
        if (Lib.MUNGE == null) {
            throw new MungeException(MungeException.Kind.OTHER, MungeException.NOT_MUNGE, Lib.MISSING);
        }
        return new Munge(socket.toAbsolutePath(), Lib.MUNGE, Lib.C);
    }

    public Path socket() {
        return socket;
    }

    /** A credential of this process's uid and gid sealing {@code payload}, with munged's default TTL. */
    public String encode(byte[] payload) throws MungeException {
        return encode(payload, Duration.ZERO);
    }

    /**
     * As {@link #encode(byte[])} with a time-to-live of {@code ttl} whole seconds (zero: munged's default,
     * 300 s unless configured; munged bounds it by its maximum). The credential is printable ASCII,
     * {@code MUNGE:...:}.
     */
    public String encode(byte[] payload, Duration ttl) throws MungeException {
        Objects.requireNonNull(payload, "payload");
        if (ttl.isNegative() || ttl.getNano() != 0 || ttl.getSeconds() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("ttl " + ttl + ": whole seconds from 0 (munged's default) up");
        }
        Pointer ctx = context();
        try {
            check(ctx, munge.munge_ctx_set(ctx, MUNGE_OPT_TTL, (int) ttl.getSeconds()), "encode");
            PointerByReference cred = new PointerByReference();
            int e = munge.munge_encode(cred, ctx, payload.length == 0 ? null : payload, payload.length);
            Pointer p = cred.getValue();
            try {
                check(ctx, e, "encode");
                return p.getString(0, StandardCharsets.US_ASCII.name());
            } finally {
                free(p);
            }
        } finally {
            munge.munge_ctx_destroy(ctx);
        }
    }

    /**
     * What {@code credential} proves, if munged accepts it: made with the same key, within its TTL, never
     * decoded before by this munged, and not restricted to another uid or gid.
     */
    public Credential decode(String credential) throws MungeException {
        Objects.requireNonNull(credential, "credential");
        if (credential.isEmpty()) { // libmunge: EMUNGE_BAD_ARG, but it is the peer's bad credential
            throw new MungeException(EMUNGE_BAD_CRED, "munge decode: not a credential (empty)");
        }
        // A C string: a NUL would end it early, and a credential is base64 between "MUNGE:" and ":".
        for (int i = 0; i < credential.length(); i++) {
            char c = credential.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                throw new MungeException(EMUNGE_BAD_CRED, "munge decode: not a credential (character "
                        + Hex.appendUpper(new StringBuilder("U+"), c, 4) + " at " + i + ")");
            }
        }
        Pointer ctx = context();
        try {
            PointerByReference buf = new PointerByReference();
            IntByReference len = new IntByReference();
            IntByReference uid = new IntByReference();
            IntByReference gid = new IntByReference();
            int e = munge.munge_decode(credential, ctx, buf, len, uid, gid);
            Pointer p = buf.getValue();
            try {
                check(ctx, e, "decode");
                byte[] payload = p == null ? new byte[0] : p.getByteArray(0, len.getValue());
                NativeLongByReference time = new NativeLongByReference();
                check(ctx, munge.munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, time), "decode");
                IntByReference ttl = new IntByReference();
                check(ctx, munge.munge_ctx_get(ctx, MUNGE_OPT_TTL, ttl), "decode");
                return new Credential(Integer.toUnsignedLong(uid.getValue()), Integer.toUnsignedLong(gid.getValue()),
                        payload, Instant.ofEpochSecond(time.getValue().longValue()),
                        Duration.ofSeconds(Integer.toUnsignedLong(ttl.getValue())));
            } finally {
                free(p); // munge.h: allocated for an expired, rewound or replayed credential too
            }
        } finally {
            munge.munge_ctx_destroy(ctx);
        }
    }

    /** A fresh context speaking to this munged. */
    private Pointer context() throws MungeException {
        Pointer ctx = munge.munge_ctx_create();
        if (ctx == null) {
            throw new MungeException(MungeException.Kind.OTHER, EMUNGE_NO_MEMORY,
                    "munge: munge_ctx_create failed (out of memory)");
        }
        int e = munge.munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.toString());
        if (e != EMUNGE_SUCCESS) {
            String text = text(ctx, e);
            munge.munge_ctx_destroy(ctx);
            throw new MungeException(e, "munge: socket " + socket + ": " + text);
        }
        return ctx;
    }

    private void check(Pointer ctx, int e, String what) throws MungeException {
        if (e == EMUNGE_SUCCESS) {
            return;
        }
        String text = text(ctx, e);
        if (MungeException.Kind.of(e) == MungeException.Kind.SOCKET) {
            throw new MungeException(e, "munge " + what + ": munged unreachable at " + socket + ": " + text);
        }
        throw new MungeException(e, "munge " + what + ": " + text);
    }

    /** The context's message where it has one (it names files and uids), else munge_strerror's; one line. */
    private String text(Pointer ctx, int e) {
        String detail = munge.munge_ctx_strerror(ctx);
        String text = detail != null && !detail.isBlank() ? detail : munge.munge_strerror(e);
        return (text == null ? "munge error " + e : text).replaceAll("\\s+", " ").strip();
    }

    private void free(Pointer p) {
        if (p != null) {
            libc.free(p);
        }
    }

    @Override
    public String toString() {
        return "Munge[" + socket + "]";
    }
}
