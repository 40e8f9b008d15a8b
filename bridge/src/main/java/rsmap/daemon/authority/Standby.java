// An authority that does not hold its state directory's lease yet: it waits, read-only, serving only who is
// active, and takes over when the active one dies or stops renewing (docs/cluster.md, "Active and standby").
package rsmap.daemon.authority;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.Endpoint;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.records.StateDirTrust;
import rsmap.daemon.state.Access;
import rsmap.log.Log;
import rsmap.wire.Authenticator;
import rsmap.wire.Category;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.ServerLimits;
import rsmap.wire.Session;
import rsmap.wire.SocketServer;

/**
 * While it waits it opens no journal. Its Unix socket answers QUERY with its role and whom it follows
 * ({@code {"role":"standby","authority":..,"follows":..,"epoch":..,"since":..}}), every other command with
 * ERROR {@code unavailable}; on {@code listen} a host's login is checked and then refused with ERROR
 * {@code unavailable} naming the active one, so that the host tries its next authority. Taking over closes
 * both; the daemon then replays the journal and binds them again.
 */
public final class Standby {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Standby() {
    }

    /** How others name the authority of {@code config}: its listen address, or this host's name when that is a wildcard. */
    static String name(Config config) {
        Endpoint listen = config.listen();
        String host = listen.host();
        if (host.equals("0.0.0.0") || host.equals("::") || host.equals("0:0:0:0:0:0:0:0")) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                host = "localhost";
            }
        }
        return new Endpoint(host, listen.port()).toString();
    }

    private static Lease open(Config config) throws IOException {
        StateDirTrust.check(config.stateDir(), config.daemonUser());
        return Lease.open(config.stateDir(), name(config), Duration.ofSeconds(config.takeoverTimeout()),
                Lease.halting());
    }

    /** The lease of {@code config}'s state directory, taken now; refused naming the active one when it is held. */
    public static Lease takeNow(Config config) throws IOException {
        Lease lease = open(config);
        try {
            if (lease.poll()) {
                return lease;
            }
            throw new IOException("state_dir " + config.stateDir() + " is held by " + following(lease)
                    + "; started as rsmapd, this authority would wait as its standby");
        } catch (IOException | RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    /**
     * Waits as a standby until this authority holds the lease, serving who is active meanwhile; returns at
     * once when the lease is free. SIGTERM while waiting stops it (exit 0).
     */
    public static Lease await(Config config, HostAuth auth, Runnable rehearse) throws IOException {
        Lease lease = open(config);
        try {
            if (lease.poll()) {
                say(lease);
                return lease;
            }
            SocketServer server = serve(config, auth, lease);
            Thread hook = new Thread(() -> {
                try {
                    server.close();
                    lease.close();
                } catch (IOException e) {
                    // stopping anyway
                }
                Runtime.getRuntime().halt(0);
            }, "rsmapd-standby-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            rehearse.run();
            Log.write(Log.Level.INFO, "standby authority " + name(config) + ": following " + following(lease)
                    + "; takes over when it stops renewing for " + config.takeoverTimeout() + " s");
            try {
                while (!lease.poll()) {
                    Thread.sleep(lease.pollMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while standing by", e);
            } finally {
                Runtime.getRuntime().removeShutdownHook(hook);
                server.close();
            }
            say(lease);
            return lease;
        } catch (IOException | RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    private static void say(Lease lease) {
        LeaseRecord r = lease.current().orElseThrow();
        Log.write(Log.Level.INFO, "authority " + r.holder() + " active, epoch " + r.epoch() + " since " + r.since()
                + ": replaying the journal");
    }

    /** The active one as the lease names it, with its epoch. */
    private static String following(Lease lease) {
        Optional<LeaseRecord> r = lease.current();
        return r.map(l -> "the active authority " + l.holder() + " (epoch " + l.epoch() + ", since " + l.since() + ")")
                .orElse("an rsmapd that keeps no lease (a host's, or an older release's)");
    }

    /** The active's part of QUERY {"cluster":true}: {"active":{"authority","epoch","since","takeover_timeout"}}. */
    public static ObjectNode active(ObjectNode state, Lease lease) {
        if (lease != null) {
            lease.current().ifPresent(r -> state.putObject("active").put("authority", r.holder())
                    .put("epoch", r.epoch()).put("since", r.since().toString()));
        }
        return state;
    }

    private static SocketServer serve(Config config, HostAuth auth, Lease lease) throws IOException {
        if (Files.exists(config.socket()) && served(config)) {
            throw new IOException("socket " + config.socket() + " is served by another rsmapd: give each authority"
                    + " on one machine its own socket");
        }
        Authenticator checked = auth.authenticator(config);
        Access access = new Access(config.adminUser(), config.daemonUser());
        Authenticator refusing = credential -> {
            checked.authenticate(credential); // a peer that proves nothing learns nothing more
            throw new Authenticator.Refused(refusal(config, lease), Category.UNAVAILABLE);
        };
        SocketServer.Builder b = SocketServer.builder(() -> new Session.Handler() {
            @Override
            public List<Frame> handle(Code code, Frame command, Session session) throws Session.CommandException {
                if (code != Code.QUERY) {
                    throw new Session.CommandException(Category.UNAVAILABLE, refusal(config, lease));
                }
                return List.of(Frame.of(command.tid(), Code.STATE.value(), view(config, lease).toString()));
            }
        }).unix(config.socket(), config.socketGroupIfPresent(), config.socketMode())
                .limits(ServerLimits.defaults(config.maxFrame())).privileged(access::privileged)
                .tcp(config.listen().address(), refusing);
        try {
            return b.start();
        } catch (IOException e) {
            throw new IOException("standby authority: cannot serve " + config.socket() + " and " + config.listen()
                    + ": " + e.getMessage(), e);
        }
    }

    /** Whether a daemon answers on the configured socket (binding it would take it from that daemon). */
    private static boolean served(Config config) {
        try (rsmap.wire.Client c = rsmap.wire.Client.connect(config.socket(), Duration.ofSeconds(2))) {
            return true;
        } catch (rsmap.wire.Client.Refusal e) {
            return true;
        } catch (IOException e) {
            return false; // nobody serves it: a socket file left behind
        }
    }

    private static String refusal(Config config, Lease lease) {
        java.util.OptionalLong in = lease.servingIn();
        return "standby authority " + name(config) + "; " + lease.current().map(l -> (in.isPresent()
                ? "taking over from " + l.holder() + " (epoch " + l.epoch() + "), serving in " + in.getAsLong() + " ms"
                : "the active one is " + l.holder() + " (epoch " + l.epoch() + ", since " + l.since() + ")"))
                .orElse("no authority holds the lease yet");
    }

    private static ObjectNode view(Config config, Lease lease) {
        ObjectNode v = JSON.createObjectNode().put("role", "standby").put("authority", name(config))
                .put("takeover_timeout", config.takeoverTimeout());
        Optional<LeaseRecord> r = lease.current();
        if (r.isPresent()) {
            v.put("follows", r.get().holder()).put("epoch", r.get().epoch()).put("since", r.get().since().toString());
            lease.servingIn().ifPresent(ms -> v.put("serves_in_ms", ms));
        } else {
            v.putNull("follows");
        }
        return v;
    }
}
