// Munge against a real munged: round trips, the uid of the encoder, and each way a credential is refused.
package rsmap.munge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.wire.Polls;

class MungeIT {
    @RegisterExtension
    static final MungedPair MUNGEDS = new MungedPair(false);
    private static Munge munge;

    @BeforeAll
    static void start() throws Exception {
        munge = MUNGEDS.munged().munge();
    }

    @Test
    void encodeDecode_payload_roundTripsWithTheEncodersIds() throws Exception {
        byte[] payload = "rsmapd-authority\0node01 \u00e9".getBytes(StandardCharsets.UTF_8); // NUL and UTF-8 too
        // munged stamps whole seconds read by time(2), which glibc serves from the coarse clock (a tick
        // behind): compared in whole seconds, as the credential holds it
        Instant before = Instant.now().minusSeconds(1).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        String cred = munge.encode(payload);
        assertThat(cred).startsWith("MUNGE:").endsWith(":");

        Munge.Credential c = munge.decode(cred);
        assertThat(c.payload()).isEqualTo(payload);
        assertThat(c.uid()).isEqualTo(id("-u"));
        assertThat(c.gid()).isEqualTo(id("-g"));
        assertThat(c.encoded()).isBetween(before, Instant.now().plusSeconds(1));
        assertThat(c.ttl()).isEqualTo(Duration.ofMinutes(5)); // munged's default
    }

    @Test
    void encodeDecode_emptyPayloadAndTtl_roundTrip() throws Exception {
        Munge.Credential c = munge.decode(munge.encode(new byte[0], Duration.ofSeconds(60)));
        assertThat(c.payload()).isEmpty();
        assertThat(c.ttl()).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void decode_twice_secondIsReplayed() throws Exception {
        String cred = munge.encode("once".getBytes(StandardCharsets.UTF_8));
        munge.decode(cred);
        assertThatThrownBy(() -> munge.decode(cred)).isInstanceOfSatisfying(MungeException.class, e -> {
            assertThat(e.kind()).isEqualTo(MungeException.Kind.REPLAYED);
            assertThat(e.errorNumber()).isEqualTo(Munge.EMUNGE_CRED_REPLAYED);
            assertThat(e.getMessage()).isEqualTo("munge decode: Replayed credential");
        });
    }

    @Test
    void decode_credentialOfAnotherKey_isInvalid() throws Exception {
        String forged = MUNGEDS.other().munge().encode("rsmapd-authority".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> munge.decode(forged)).isInstanceOfSatisfying(MungeException.class, e -> {
            assertThat(e.kind()).isEqualTo(MungeException.Kind.INVALID);
            assertThat(e.errorNumber()).isEqualTo(Munge.EMUNGE_CRED_INVALID);
        });
    }

    /** Not credentials of this key: each is INVALID, and never reaches further than munged's first checks. */
    @Test
    void decode_garbled_isInvalid() throws Exception {
        String good = munge.encode("x".getBytes(StandardCharsets.UTF_8));
        int mid = good.length() / 2;
        String flipped = good.substring(0, mid) + (good.charAt(mid) == 'A' ? 'B' : 'A') + good.substring(mid + 1);
        List<String> garbled = List.of("", "MUNGE:", "MUNGE::", "MUNGE:AAAA:", "hello", good.substring(0, mid) + ":",
                flipped, good + "\0tail", good.replace(':', '\u00e9'), " " + good);
        for (String g : garbled) {
            assertThatThrownBy(() -> munge.decode(g)).as(g).isInstanceOfSatisfying(MungeException.class,
                    e -> assertThat(e.kind()).as(g + ": " + e.getMessage()).isEqualTo(MungeException.Kind.INVALID));
        }
        assertThatThrownBy(() -> munge.decode(good + "\0tail")).hasMessageContaining("(character U+0000 at "
                + good.length() + ")");
        assertThatThrownBy(() -> munge.decode(good.replace(':', '\u00e9'))).hasMessageContaining("character U+00E9 at 5");
        munge.decode(good); // the garbled copies did not use it up
    }

    /**
     * munged expires a credential when its clock's whole seconds pass the encode second plus the TTL
     * (src/munged/dec.c, dec_validate_time), so TTL 1 is expired from 2 to 3 s after encoding: the
     * smallest TTL, and the wait here. munged reads its clock with time(), which glibc answers from the
     * coarse clock, up to a tick behind this JVM's: the wait goes 100 ms past the second (without it, CI
     * once decoded at the turn of the second while munged's clock still showed the one before).
     */
    @Test
    void decode_afterTtl_isExpired() throws Exception {
        String cred = munge.encode("brief".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(1));
        waitPastTtlOfOneSecond();
        assertThatThrownBy(() -> munge.decode(cred)).isInstanceOfSatisfying(MungeException.class, e -> {
            assertThat(e.kind()).isEqualTo(MungeException.Kind.EXPIRED);
            assertThat(e.errorNumber()).isEqualTo(Munge.EMUNGE_CRED_EXPIRED);
        });
    }

    /** Called right after a credential of TTL 1 was encoded: returns once munged takes it for expired (above). */
    static void waitPastTtlOfOneSecond() throws InterruptedException {
        Instant expired = Instant.ofEpochSecond(Instant.now().getEpochSecond() + 2).plusMillis(100);
        Polls.until("the clock past the credential's second", Duration.ofSeconds(4), () -> !Instant.now().isBefore(expired));
    }

    @Test
    void decode_restrictedToAnotherUid_isUnauthorized() throws Exception {
        long notMe = id("-u") == 65534 ? 65533 : 65534;
        String cred = MUNGEDS.munged().encodeWithCli("for someone else", "--restrict-uid=" + notMe);
        assertThatThrownBy(() -> munge.decode(cred)).isInstanceOfSatisfying(MungeException.class,
                e -> assertThat(e.kind()).isEqualTo(MungeException.Kind.UNAUTHORIZED));
    }

    @Test
    void encodeDecode_mungedNotRunning_isSocketNamingIt() throws Exception {
        MungeD gone = MungeD.start();
        Munge m = gone.munge();
        String cred = m.encode(new byte[0]);
        gone.close();
        long start = System.nanoTime();
        assertThatThrownBy(() -> m.encode(new byte[0])).isInstanceOfSatisfying(MungeException.class, e -> {
            assertThat(e.kind()).isEqualTo(MungeException.Kind.SOCKET);
            assertThat(e.errorNumber()).isEqualTo(Munge.EMUNGE_SOCKET);
            assertThat(e.getMessage()).startsWith("munge encode: munged unreachable at " + gone.socket() + ": ")
                    .contains("Did you start munged?");
        });
        assertThatThrownBy(() -> m.decode(cred)).isInstanceOfSatisfying(MungeException.class, e -> {
            assertThat(e.kind()).isEqualTo(MungeException.Kind.SOCKET);
            assertThat(e.getMessage()).startsWith("munge decode: munged unreachable at " + gone.socket());
        });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void crossCheck_javaEncodes_unmungeDecodes() throws Exception {
        MungeD.Run r = MUNGEDS.munged().unmunge(munge.encode("from java".getBytes(StandardCharsets.UTF_8)));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("STATUS:          Success (0)").contains("UID:").endsWith("from java");
    }

    @Test
    void crossCheck_mungeEncodes_javaDecodes() throws Exception {
        Munge.Credential c = munge.decode(MUNGEDS.munged().encodeWithCli("from the cli", "--ttl=42"));
        assertThat(new String(c.payload(), StandardCharsets.UTF_8)).isEqualTo("from the cli");
        assertThat(c.uid()).isEqualTo(id("-u"));
        assertThat(c.ttl()).isEqualTo(Duration.ofSeconds(42));
    }

    /** One context per call: threads never share libmunge state. */
    @Test
    void encodeDecode_eightThreads_allRoundTrip() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        byte[] p = ("t" + thread + " i" + i).getBytes(StandardCharsets.UTF_8);
                        assertThat(munge.decode(munge.encode(p)).payload()).isEqualTo(p);
                    }
                    return 100;
                }));
            }
            for (Future<Integer> f : done) {
                assertThat(f.get()).isEqualTo(100);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void encode_badTtl_isRefusedBeforeMunged() {
        for (Duration ttl : List.of(Duration.ofSeconds(-1), Duration.ofMillis(1500), Duration.ofSeconds(1L << 31))) {
            assertThatThrownBy(() -> munge.encode(new byte[0], ttl)).as(ttl.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole seconds");
        }
    }

    static long id(String which) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("id", which).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return Long.parseLong(out);
    }
}
