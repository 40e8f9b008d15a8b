// What rsmapd checks before it touches its state: every slip of the configuration stops it with one line
// naming the file, the line and why, rather than freeing or widening anything later.
package rsmap.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import rsmap.ParseException;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.config.HostSettings;
import rsmap.daemon.state.HostState;
import rsmap.device.Backends;
import rsmap.device.DevicePolicyException;
import rsmap.device.DryRunBackend;
import rsmap.device.Isolation;
import rsmap.log.Log;
import rsmap.log.LogBook;

/** The checks of the fail-closed job path for a careless admin, in the order the daemon runs them. */
final class Preflight {
    private final Config config;
    private final Path file;

    Preflight(Config config, Path file) {
        this.config = config;
        this.file = file;
    }

    /** The configuration file and the line that set {@code key}, for error lines. */
    String where(String key) {
        return ConfigText.where(config, file, key);
    }


    /**
     * The hooks trust a server of root or of {@code daemon_user} only: a daemon run as another
     * user would be refused by every hook, so it does not start.
     */
    void daemonUser() throws IOException {
        String me = System.getProperty("user.name", "");
        if (config.lineOf("daemon_user") > 0 && !me.equals("root") && !me.equals(config.daemonUser())) {
            throw new IOException(where("daemon_user") + ": rsmapd runs as '" + me + "', not as '" + config.daemonUser()
                    + "' or root: the hooks would not trust its answers");
        }
    }


    /**
     * An authority checks every host's credential: without munged's library or a daemon_user
     * it can resolve, it does not start, rather than serve TCP with no way to tell who connects.
     */
    rsmap.wire.Authenticator authenticator(HostAuth auth) throws IOException {
        try {
            return auth.authenticator(config);
        } catch (IOException e) {
            throw new IOException(where("munge_socket") + ": cannot check the hosts' credentials: " + e.getMessage(), e);
        }
    }

    void spool() throws IOException {
        HostSettings.checkSpool(config, file);
    }

    /**
     * The backend proves at start that it can enforce: with {@code isolation = required} a
     * backend that cannot stops the daemon; with {@code optional} jobs run unrestricted and that is said.
     * {@code dry-run} is the admin's explicit choice not to enforce (rsmapd.conf(5)).
     */
    Isolation isolation(LogBook log) throws IOException {
        if (config.isolation() == Isolation.Mode.OFF) {
            log.note(Log.Level.WARNING, "isolation = off: jobs run without a device policy and reach every device");
            return new Isolation(new DryRunBackend(), Isolation.Mode.OFF);
        }
        try {
            return new Isolation(Backends.choose(config.deviceBackend()), config.isolation());
        } catch (DevicePolicyException e) {
            if (config.isolation() == Isolation.Mode.REQUIRED) {
                throw new IOException(where("device_backend") + ": " + e.getMessage() + " (isolation = required)", e);
            }
            log.note(Log.Level.WARNING, "device isolation is NOT enforced (isolation=optional): " + e.getMessage());
            return new Isolation(new DryRunBackend(), Isolation.Mode.OPTIONAL);
        }
    }

    /** An authority's: it runs no job's process. */

    /** complex_values that do not parse stop the daemon with the file, the line and the reason. */
    void values(HostState s) throws IOException {
        for (String key : List.of("complex_values", "global_complex_values")) {
            try {
                s.values(key.equals("complex_values") ? config.complexValues() : config.globalComplexValues());
            } catch (ParseException e) {
                throw new IOException(where(key) + ": " + e.getMessage(), e);
            }
        }
    }

}
