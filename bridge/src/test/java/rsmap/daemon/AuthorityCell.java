// Test support: a cluster on one machine for the authority's ITs - a real munged, authorities as rsmapd
// processes of their own (so that a test can SIGKILL or SIGSTOP them), host daemons each with its own socket,
// state directory and loopback link, and jobs through execd-stub and the real hooks on those hosts.
package rsmap.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import rsmap.daemon.authority.AuthorityTest;
import rsmap.daemon.config.Config;
import rsmap.munge.MungeD;
import rsmap.wire.Client;
import rsmap.wire.Code;
import rsmap.wire.Ports;

/**
 * Registered as a static field ({@code @RegisterExtension}): munged is one per test class; everything else
 * is one per test. Before each test it checks root (as sge_execd: the hooks and the daemons' trust need it;
 * a non-root run skips, under CI=true fails) and makes the shared directory (mode 0755, under /tmp, so that
 * a job's owner reaches the hook, the sockets and its tmpdir) holding the hook and its rsmap-starter link.
 * The shared directory is an execution host's cell ({@link ExecdCell#open}) that every host's jobs share.
 * After each test, after the test class's own {@code @AfterEach}: what the test handed to {@link #closeAfter}
 * is closed, then the hosts, every authority is sent SIGCONT (one may be stopped) and SIGKILL and reaped, and
 * the shared directory removed; each step runs whatever an earlier one threw.
 *
 * <p>An authority is a name: its directory {@code shared/NAME} (rsmapd.conf, rsmapd.sock, log) and a loopback
 * port, taken on first use. A host names every authority whose port was taken, in that order.
 */
public final class AuthorityCell implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String prefix;
    private MungeD munged;
    private ExecdCell execd;
    private Path shared;
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, Process> authorities = new LinkedHashMap<>();
    private final Map<String, Daemon> hosts = new LinkedHashMap<>();
    private final Map<String, Config> configs = new HashMap<>();
    private final List<AutoCloseable> also = new ArrayList<>();

    /** {@code prefix}: the shared directory's name under /tmp, before its random part. */
    public AuthorityCell(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        munged = MungeD.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (munged != null) {
            munged.close();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        ExecdCell.jobUser();
        execd = ExecdCell.open(prefix);
        shared = execd.dir();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        List<AutoCloseable> steps = new ArrayList<>(also);
        steps.addAll(hosts.values());
        for (Process p : authorities.values()) {
            steps.add(() -> {
                ProcessHandle.of(p.pid()).ifPresent(h -> signal(h.pid(), "CONT"));
                p.destroyForcibly().waitFor();
            });
        }
        if (execd != null) {
            steps.add(execd);
        }
        also.clear();
        hosts.clear();
        configs.clear();
        authorities.clear();
        ports.clear();
        execd = null;
        shared = null;
        Exception first = null;
        for (AutoCloseable step : steps) { // each one, whatever the one before it did: no authority outlives a test
            try {
                step.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** What the test started beside the cell (a pool of jobs): closed first after the test, before the hosts. */
    void closeAfter(AutoCloseable c) {
        also.add(c);
    }

    /** The test's shared directory (mode 0755): the hosts' and authorities' directories, the jobs' tmpdir. */
    public Path shared() {
        return shared;
    }

    /** Authority {@code name}'s directory. */
    public Path dir(String name) {
        return shared.resolve(name);
    }

    /** Authority {@code name}'s Unix socket. */
    public Path socket(String name) {
        return dir(name).resolve("rsmapd.sock");
    }

    /** Authority {@code name}'s loopback port, a free one taken on first use. */
    public int port(String name) throws Exception {
        Integer p = ports.get(name);
        if (p == null) {
            p = Ports.free();
            ports.put(name, p);
        }
        return p;
    }

    /** Authority {@code name}'s process, as last started. */
    public Process authority(String name) {
        return authorities.get(name);
    }

    /**
     * Authority {@code name} of {@code global} (AuthorityTest's configuration, munged's socket, {@code more}, a
     * setting there replacing the default one); the configuration is written only if absent: after a kill it
     * restarts on the same state.
     */
    public Process startAuthority(String name, String global, String... more) throws Exception {
        if (!Files.exists(dir(name).resolve("rsmapd.conf"))) {
            List<String> lines = new ArrayList<>(List.of("munge_socket = " + munged.socket()));
            lines.addAll(List.of(more));
            AuthorityTest.authorityConfig(dir(name), port(name), global, lines.toArray(new String[0]));
        }
        return startAuthority(name);
    }

    /** Authority {@code name} on the rsmapd.conf in its directory, once its socket is there. */
    public Process startAuthority(String name) throws Exception {
        Path d = dir(name);
        Process p = RsmapdProcess.start(d.resolve("rsmapd.conf"), d.resolve("rsmapd.sock"), d.resolve("log"));
        authorities.put(name, p);
        return p;
    }

    /** The class's munged: its socket is in every configuration here; a test's own credentials come from it. */
    public MungeD munged() {
        return munged;
    }

    /** Host daemon {@code host} serving {@code values}, linked to every authority with a port; then {@code more}. */
    public Config startHost(String host, String values, String... more) throws Exception {
        String links = ports.values().stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
        List<String> lines = new ArrayList<>(List.of("host = " + host, "authority = " + links,
                "munge_socket = " + munged.socket(), "socket_mode = 0666", "reconcile_interval = 0"));
        lines.addAll(List.of(more));
        Config c = TestDaemon.config(shared.resolve(host), values, lines.toArray(new String[0]));
        hosts.put(host, TestDaemon.start(c));
        configs.put(host, c);
        return c;
    }

    public Daemon host(String host) {
        return hosts.get(host);
    }

    /** Closes host daemon {@code host} before the test ends. */
    public void stopHost(String host) throws Exception {
        hosts.remove(host).close();
    }

    /** A job through execd-stub and the hooks on {@code host} (spooled in its folder); the job is {@code sh -c script}. */
    public Process job(String host, String id, String request, String script) throws Exception {
        return execd.stub(id).host(host).spool(shared.resolve(host).resolve("spool"))
                .socket(configs.get(host).socket()).request(request).sh(script);
    }

    /** A job's output and {@code exit=CODE}, once it ended within 60 s. */
    public static String finish(Process p) throws Exception {
        return ExecdCell.finish(p, 60);
    }

    /** QUERY on authority {@code name}'s socket: its own view, or with {@code cluster} the cluster's. */
    public JsonNode query(String name, boolean cluster) throws Exception {
        try (Client c = Client.connect(socket(name))) {
            return JSON.readTree(c.call(Code.QUERY, cluster ? "{\"cluster\":true}" : "{}").get(0).text(0));
        }
    }

    /** {@code kill -SIG PID}. */
    public static void signal(long pid, String sig) {
        try {
            new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).start().waitFor();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
