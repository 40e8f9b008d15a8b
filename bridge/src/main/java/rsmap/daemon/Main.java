// rsmapd: reads its configuration, replays the journal and serves the agent protocol until stopped.
package rsmap.daemon;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.authority.Standby;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.Discovery;
import rsmap.daemon.config.HostAuth;
import rsmap.daemon.job.Notify;

/**
 * {@code rsmapd [--config FILE]} (default /etc/rsmap/rsmapd.conf). A configuration error stops it at
 * start with one line naming the file, line and reason, and exit code 2; SIGTERM stops it cleanly, exit
 * code 0 (143 when it comes while rsmapd starts, before it serves).
 */
public final class Main {
    private static final String USAGE = "rsmapd [--config FILE] | rsmapd --train-cds | rsmapd --help";

    private Main() {
    }

    public static void main(String[] args) throws InterruptedException {
        Path file = Path.of("/etc/rsmap/rsmapd.conf");
        if (args.length == 1 && args[0].equals("--train-cds")) {
            try {
                System.exit(Training.run());
            } catch (Exception e) {
                System.err.println("error: --train-cds: " + e.getMessage());
                System.exit(1);
            }
        }
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(USAGE);
            System.exit(0);
        }
        if (args.length == 2 && args[0].equals("--config")) {
            file = Path.of(args[1]);
        } else if (args.length != 0) {
            System.err.println("error: usage: " + USAGE);
            System.exit(2);
        }
        // Start-up is mostly class loading, and Jackson's is the largest part: load it on the second core
        // while this one reads the configuration and the complex table.
        Thread warm = new Thread(() -> new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode()
                .put("warm", 1).toString(), "rsmapd-warm-up");
        warm.setDaemon(true);
        warm.start();
        // The stop's hook is in place before anything starts, so that no signal finds a served socket without
        // it: SIGTERM (or SIGINT, SIGHUP) once it serves closes the socket and the journal in order, and
        // rsmapd(8) promises exit 0 for that (halt with 0, or the JVM would end with 128 + the signal, 143);
        // closing that fails exits 1. One that comes while it starts ends it before it serves, with 143.
        Stop stop = new Stop(notifier());
        Runtime.getRuntime().addShutdownHook(new Thread(stop::run, "rsmapd-stop"));
        try {
            Config config = Config.parse(ConfigText.read(file), file, hostName());
            ComplexTable table;
            try {
                table = ComplexTable.parse(ConfigText.read(config.complexes()));
            } catch (ParseException e) {
                throw new IllegalArgumentException(config.complexes() + ": " + e.lineAndColumn() + ": " + e.problem());
            }
            if (!stop.serve(waitingAsStandby(config, table, file))) {
                return; // a signal came while it started: nothing served
            }
            System.out.println("rsmapd: host " + config.host() + ", socket " + config.socket() + ", state "
                    + config.stateDir());
        } catch (ParseException e) {
            stop.failed();
            System.err.println("error: " + file + ": " + e.lineAndColumn() + ": " + e.problem());
            System.exit(2);
            return;
        } catch (IllegalArgumentException | IOException e) {
            stop.failed();
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        stop.ready();
    }

    /**
     * The stop's hook and what it stops. No System.exit comes after the daemon serves (the journal's failure
     * halts with 75, out of memory with 3), so from then on the hook runs only for a signal; before, a
     * start-up error's exit 2 is left to the JVM.
     */
    private static final class Stop {
        private final Optional<Notify> notify;
        private final CountDownLatch stopped = new CountDownLatch(1);
        /** Set once a start-up error is on its way to exit 2: the hook leaves that exit alone. */
        private volatile boolean failed;
        /** Guarded by this: a stop has begun; the daemon serving, null until then. */
        private boolean stopping;
        private Daemon daemon;

        Stop(Optional<Notify> notify) {
            this.notify = notify;
        }

        /**
         * Serves {@code built} unless a stop began first (false: closed, nothing served). Under the hook's
         * monitor: a signal while the socket is being bound waits for it, then closes it in order.
         */
        boolean serve(Daemon built) throws IOException {
            synchronized (this) {
                if (!stopping) {
                    daemon = built.serve();
                    return true;
                }
            }
            built.close();
            return false;
        }

        void failed() {
            failed = true;
        }

        /** The service manager's READY=1 (Type=notify): the socket answers from here on; then waits for the stop. */
        void ready() throws InterruptedException {
            notify.ifPresent(n -> tell(n, "READY=1"));
            stopped.await();
        }

        void run() {
            if (failed) {
                return;
            }
            Daemon serving;
            synchronized (this) {
                stopping = true;
                serving = daemon;
            }
            if (serving == null) {
                return; // still starting: the journal is as safe as after a kill; the JVM ends with 143
            }
            notify.ifPresent(n -> tell(n, "STOPPING=1"));
            int status = 0;
            try {
                serving.close();
            } catch (IOException | RuntimeException e) {
                System.err.println("rsmapd: closing: " + e.getMessage());
                status = 1;
            }
            stopped.countDown();
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }
    }

    /** The supervisor's notification socket; a malformed one is reported and ignored, as sd_notify does. */
    private static Optional<Notify> notifier() {
        try {
            return Notify.fromEnvironment(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("rsmapd: " + e.getMessage());
            return Optional.empty();
        }
    }

    /** A supervisor that cannot be told is reported; the daemon serves on (the supervisor decides). */
    private static void tell(Notify notify, String state) {
        try {
            notify.send(state);
        } catch (IOException e) {
            System.err.println("rsmapd: " + state + ": " + e.getMessage());
        }
    }

    /** The short host name: the kernel's (no resolver involved), else the JDK's. */
    private static String hostName() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
            if (!h.isEmpty()) {
                int dot = h.indexOf('.');
                return dot > 0 ? h.substring(0, dot) : h;
            }
        } catch (IOException e) {
            // not Linux: ask the JDK
        }
        try {
            String h = InetAddress.getLocalHost().getHostName();
            int dot = h.indexOf('.');
            return dot > 0 ? h.substring(0, dot) : h;
        } catch (IOException e) {
            return "localhost";
        }
    }

    /**
     * rsmapd's daemon for {@code config}: an authority first waits as a standby while another authority holds
     * the state directory's lease ({@link Standby}); a host is built at once.
     */
    private static Daemon waitingAsStandby(Config config, ComplexTable table, Path configFile) throws ParseException,
            IOException {
        return new Daemon(config, table, configFile, Discovery.system(), HostAuth.MUNGE, config.isAuthority()
                ? Standby.await(config, HostAuth.MUNGE, () -> Rehearsal.start(config, table, configFile, HostAuth.MUNGE))
                : null);
    }
}
