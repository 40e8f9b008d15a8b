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

/**
 * {@code rsmapd [--config FILE]} (default /etc/rsmap/rsmapd.conf). A configuration error stops it at
 * start with one line naming the file, line and reason, and exit code 2; SIGTERM stops it cleanly,
 * exit code 0.
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
        Daemon daemon;
        try {
            Config config = Config.parse(ConfigText.read(file), file, hostName());
            ComplexTable table;
            try {
                table = ComplexTable.parse(ConfigText.read(config.complexes()));
            } catch (ParseException e) {
                throw new IllegalArgumentException(config.complexes() + ": " + e.lineAndColumn() + ": " + e.problem());
            }
            daemon = Daemon.waitingAsStandby(config, table, file).serve();
            System.out.println("rsmapd: host " + config.host() + ", socket " + config.socket() + ", state "
                    + config.stateDir());
        } catch (ParseException e) {
            System.err.println("error: " + file + ": " + e.lineAndColumn() + ": " + e.problem());
            System.exit(2);
            return;
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        Optional<Notify> notify = notifier();
        CountDownLatch stopped = new CountDownLatch(1);
        Daemon running = daemon;
        // SIGTERM (or SIGINT, SIGHUP) runs this hook; once the socket and the journal are closed in order
        // the stop was clean, and rsmapd(8) promises exit 0 for it: halt with 0, or the JVM would end
        // with 128 + the signal (143). No System.exit comes after this point (the journal's failure
        // halts with 75, out of memory with 3), so the hook runs only for a signal. Closing that fails
        // exits 1 (rsmapd(8), EXIT STATUS).
        Thread stop = new Thread(() -> {
            notify.ifPresent(n -> tell(n, "STOPPING=1"));
            int status = 0;
            try {
                running.close();
            } catch (IOException | RuntimeException e) {
                System.err.println("rsmapd: closing: " + e.getMessage());
                status = 1;
            }
            stopped.countDown();
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }, "rsmapd-stop");
        try {
            Runtime.getRuntime().addShutdownHook(stop);
        } catch (IllegalStateException e) {
            // A signal came while it started, before this hook: the JVM is already on its way out (128 +
            // the signal, rsmapd(8)); the journal is as safe as after a kill, and the next start replaces
            // the socket file. Quietly: no stack trace for a stop.
            return;
        }
        // The service manager's READY=1 (Type=notify): the socket answers from here on.
        notify.ifPresent(n -> tell(n, "READY=1"));
        stopped.await();
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
}
