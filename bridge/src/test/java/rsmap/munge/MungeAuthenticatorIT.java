// MungeAuthenticator against a real munged: who may connect, and the one line for each credential refused.
package rsmap.munge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.wire.Authenticator;
import rsmap.wire.Session;

/**
 * Runs as root (credentials of other uids come from {@code setpriv --reuid=nobody munge}). The authority
 * here runs as daemon user {@code daemon} (uid 1 on Debian and RHEL), so that {@code nobody} is a
 * stranger; one test makes {@code nobody} the daemon user.
 */
class MungeAuthenticatorIT {
    private static final String PURPOSE = MungeAuthenticator.purpose("authority01");
    @RegisterExtension
    static final MungedPair MUNGEDS = new MungedPair(true);
    private static Munge munge;
    private static MungeAuthenticator authenticator;

    @BeforeAll
    static void start() throws Exception {
        munge = MUNGEDS.munged().munge();
        authenticator = new MungeAuthenticator(munge, "daemon", PURPOSE);
    }

    private static String credential(String payload) throws MungeException {
        return munge.encode(payload.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void authenticate_root_isAcceptedAsRoot() throws Exception {
        Session.Peer p = authenticator.authenticate(credential("rsmapd-authority authority01"));
        assertThat(p).isEqualTo(new Session.Peer("root", "root", 0, 0, 0));
        assertThat(p.isRoot()).isTrue();
    }

    @Test
    void authenticate_daemonUser_isAcceptedWithItsNames() throws Exception {
        MungeAuthenticator nobodyRuns = new MungeAuthenticator(munge, "nobody", PURPOSE);
        Session.Peer p = nobodyRuns.authenticate(MUNGEDS.munged().encodeAs("nobody", PURPOSE));
        long gid = MungeIT.id("-g");
        assertThat(p.user()).isEqualTo("nobody");
        assertThat(p.uid()).isEqualTo(65534);
        assertThat(p.gid()).isNotEqualTo(gid); // nobody's primary group (nogroup), not root's
        assertThat(p.group()).isIn("nogroup", "nobody");
        assertThat(p.isRoot()).isFalse();
    }

    @Test
    void authenticate_anotherUid_isRefusedNamingIt() throws Exception {
        String cred = MUNGEDS.munged().encodeAs("nobody", PURPOSE);
        assertThatThrownBy(() -> authenticator.authenticate(cred)).isInstanceOf(Authenticator.Refused.class)
                .hasMessage("munge credential of uid 65534 ('nobody'): only root or 'daemon' may connect");
    }

    @Test
    void authenticate_rootOnly_saysRoot() throws Exception {
        MungeAuthenticator rootOnly = new MungeAuthenticator(munge, "root", PURPOSE);
        String cred = MUNGEDS.munged().encodeAs("nobody", PURPOSE);
        assertThatThrownBy(() -> rootOnly.authenticate(cred))
                .hasMessage("munge credential of uid 65534 ('nobody'): only root may connect");
    }

    @Test
    void authenticate_replayed_isRefused() throws Exception {
        String cred = credential(PURPOSE);
        authenticator.authenticate(cred);
        assertThatThrownBy(() -> authenticator.authenticate(cred)).isInstanceOf(Authenticator.Refused.class)
                .hasMessage("munge credential replayed");
    }

    @Test
    void authenticate_forged_isRefused() throws Exception {
        String forged = MUNGEDS.other().munge().encode(PURPOSE.getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> authenticator.authenticate(forged)).isInstanceOf(Authenticator.Refused.class)
                .hasMessage("munge credential invalid (forged, or another key)");
        assertThatThrownBy(() -> authenticator.authenticate("MUNGE:AAAA:"))
                .hasMessage("munge credential invalid (forged, or another key)");
    }

    /** Someone else's ticket is not ours: Slurm's credentials seal other payloads, another authority's its name. */
    @Test
    void authenticate_otherPurpose_isRefused() throws Exception {
        for (String payload : new String[] {"", "rsmapd-authority", "rsmapd-authority authority02",
            "rsmapd-authority authority01 ", "slurm"}) {
            String cred = credential(payload);
            assertThatThrownBy(() -> authenticator.authenticate(cred)).as(payload)
                    .isInstanceOf(Authenticator.Refused.class)
                    .hasMessage("munge credential for another purpose (not 'rsmapd-authority authority01')");
        }
    }

    @Test
    void authenticate_expired_isRefused() throws Exception {
        String cred = munge.encode(PURPOSE.getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(1));
        MungeIT.waitPastTtlOfOneSecond();
        assertThatThrownBy(() -> authenticator.authenticate(cred)).hasMessage("munge credential expired");
    }

    @Test
    void authenticate_noOrHugeCredential_isRefusedUnread() {
        assertThatThrownBy(() -> authenticator.authenticate(null)).hasMessage("no munge credential");
        assertThatThrownBy(() -> authenticator.authenticate("")).hasMessage("no munge credential");
        assertThatThrownBy(() -> authenticator.authenticate("MUNGE:" + "A".repeat(5000) + ":"))
                .hasMessage("munge credential too long (5007 characters, at most 4096)");
    }

    /** Fail closed: without munged nothing can be checked, so nothing is accepted. */
    @Test
    void authenticate_mungedDown_isRefusedSayingSo() throws Exception {
        MungeD gone = MungeD.start();
        Munge m = gone.munge();
        String cred = m.encode(PURPOSE.getBytes(StandardCharsets.UTF_8));
        gone.close();
        MungeAuthenticator a = new MungeAuthenticator(m, "daemon", PURPOSE);
        assertThatThrownBy(() -> a.authenticate(cred)).isInstanceOf(Authenticator.Refused.class)
                .hasMessageStartingWith("munge credential not checked: munge decode: munged unreachable at "
                        + gone.socket());
    }

    @Test
    void construct_unknownDaemonUser_failsNamingIt() {
        assertThatThrownBy(() -> new MungeAuthenticator(munge, "no-such-user-rsmap", PURPOSE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("daemon user 'no-such-user-rsmap' is unknown here");
    }
}
