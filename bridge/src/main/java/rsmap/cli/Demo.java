// rsmap demo: a real rsmapd, the execd stand-in and the real hooks on the bundled example host, a few
// jobs that show what users see, explained as it goes.
package rsmap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.Daemon;
import rsmap.device.DevicePolicy;
import rsmap.device.v1.CgroupV1Backend;
import rsmap.map.ComplexValues;
import rsmap.map.Instance;
import rsmap.map.ResourceMap;
import rsmap.wire.Client;
import rsmap.wire.Code;

/**
 * "First run": starts rsmapd in this process as the current user on a temporary socket with the
 * example host (examples/ in the source tree, bundled in the jar), runs jobs through execd-stub with the
 * real rsmap-hook (prolog, starter, epilog) - a whole card, a share, a characteristic match, one that
 * cannot start until another ends, one refused - and prints what each job saw and its device policy
 * (dry-run when not root, cgroup v1 when root and available), then removes everything it made.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, description = "Run a few jobs through rsmapd, the execd "
        + "stand-in and the hooks on the bundled example host, and explain what each one saw.")
final class Demo implements java.util.concurrent.Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    private PrintWriter out;
    private Path dir;
    private Path hook;
    private Path starter;
    private Path stub;
    private boolean root;
    private ComplexValues host;
    private final Map<String, JsonNode> grants = new ConcurrentHashMap<>();

    @Override
    public Integer call() throws Refused {
        out = spec.commandLine().getOut();
        long t0 = System.nanoTime();
        hook = Libexec.find("rsmap-hook");
        starter = Libexec.find("rsmap-starter");
        stub = Libexec.find("execd-stub");
        root = "root".equals(System.getProperty("user.name"));
        try {
            dir = Files.createTempDirectory("rsmap-demo", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwxr-xr-x")));
            try {
                run();
            } finally {
                rsmap.daemon.config.Bundled.deleteTree(dir);
            }
        } catch (IOException e) {
            throw new Refused("demo: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("demo: interrupted");
        }
        out.printf("%nDone in %.1f s; the temporary directory is gone. Next: README.md, docs/integration-ocs.md.%n",
                (System.nanoTime() - t0) / 1e9);
        return 0;
    }

    private void run() throws IOException, InterruptedException, Refused {
        String complexes = rsmap.daemon.config.Bundled.example("complexes");
        String values = rsmap.daemon.config.Bundled.example("node01.complex_values").strip();
        ComplexTable table;
        try {
            table = ComplexTable.parse(complexes);
            host = ComplexValues.parse(values, table);
        } catch (ParseException e) {
            throw new Refused("demo: the bundled example does not parse: " + e.getMessage());
        }
        String backend = "dry-run";
        if (root && new CgroupV1Backend(CgroupV1Backend.DEFAULT_ROOT).availability().available()) {
            backend = "cgroup-v1";
        }
        Path conf = rsmap.daemon.config.Bundled.exampleDaemon(dir, backend);
        Config config;
        try {
            config = Config.parse(Files.readString(conf), conf, "node01");
        } catch (ParseException e) {
            throw new Refused("demo: " + e.getMessage());
        }
        out.println("rsmap demo: rsmapd, the execd stand-in and the hooks, on the example host node01");
        for (ResourceMap m : host.resourceMaps()) {
            List<String> ids = new ArrayList<>();
            m.instances().forEach(i -> ids.add(i.id()));
            out.println("  " + m.name() + "=" + m.amount() + ": instances " + String.join(" ", ids));
        }
        out.println("  rsmapd serves " + config.socket() + " in this process; its journal is " + config.stateDir()
                .resolve("journal"));
        out.println(backend.equals("dry-run")
                ? "  devices: dry-run backend (not root, or no cgroup v1 devices controller): each job's policy is"
                        + " computed and shown, not enforced"
                : "  devices: cgroup v1 backend: each job runs in /sys/fs/cgroup/devices/rsmap/<job> under its policy");
        out.println("  Each job goes through execd-stub: prolog (rsmap-hook prolog: JOB_START), starter (rsmap-starter:"
                + " JOB_ENTER, SGE_HGR_*), the job, epilog (JOB_END).");
        out.println("  Every job brings SGE_HGR_gpu=evil in its own environment: the starter drops it, so a job sees"
                + " only its grant.");
        rsmap.log.Log.redirect(line -> {
            synchronized (out) {
                out.println("     " + line);
            }
        });
        try (Daemon daemon = new Daemon(config, table, conf).serve(); Client events = Client.connect(config.socket())) {
            Thread watcher = new Thread(() -> watch(events), "demo-events");
            watcher.setDaemon(true);
            watcher.start();
            demoJobs(config.socket());
        } catch (Client.Refusal e) {
            throw new Refused("demo: rsmapd refused: " + e.getMessage());
        } catch (ParseException e) {
            throw new Refused("demo: " + e.getMessage());
        } finally {
            rsmap.log.Log.redirect(null);
        }
    }

    private void demoJobs(Path socket) throws IOException, InterruptedException, Refused {
        step("1. A whole card: RSMAP_REQUEST='gpu=4[same=id]' - four shares that agree on one identifier.");
        Job one = start(socket, "101", "gpu=4[same=id]", true);
        one.awaitRunning();
        step("2. One share: 'gpu=1' - card 0 is full, so the share comes from card 1.");
        Job two = start(socket, "102", "gpu=1", true);
        two.awaitRunning();
        step("3. A characteristic: 'nic=1[bandwidth=150000]' - bandwidth's relop is <= (examples/complexes): an"
                + " instance with at least 150000.");
        start(socket, "103", "nic=1[bandwidth=150000]", false).finish();
        step("4. Another whole card, 'gpu=4[same=id]', while card 0 is held and card 1 is shared.");
        start(socket, "104", "gpu=4[same=id]", false).finish();
        out.println("   Why, as `rsmap explain 'gpu=4[same=id]'` tells an admin on the host:");
        try (Client c = Client.connect(socket)) {
            JsonNode q = JSON.readTree(c.call(Code.QUERY, JSON.createObjectNode().put("explain", "gpu=4[same=id]")
                    .toString()).get(0).text(0));
            for (String line : q.path("explain").path("text").asText().split("\n")) {
                out.println("     " + line);
            }
        } catch (Client.Refusal e) {
            throw new Refused("demo: " + e.getMessage());
        }
        out.println("   Job 101 ends; its epilog gives card 0 back. execd starts job 104 again:");
        one.finish();
        start(socket, "104", "gpu=4[same=id]", false).finish();
        two.finish();
        step("5. A malformed request: 'gpu=1[scope=job]'.");
        start(socket, "105", "gpu=1[scope=job]", false).finish();
        try (Client c = Client.connect(socket)) {
            JsonNode q = JSON.readTree(c.call(Code.QUERY).get(0).text(0));
            out.println();
            out.println("rsmapd holds " + (q.path("jobs").isEmpty() ? "nothing" : q.path("jobs").toString())
                    + " now: every grant was given back.");
        } catch (Client.Refusal e) {
            throw new Refused("demo: " + e.getMessage());
        }
    }

    private void step(String text) {
        out.println();
        out.println(text);
    }

    /** A job through execd-stub; a held one waits for its release file before it ends. */
    private final class Job {
        final String id;
        final Process process;
        final Path release;
        final Path running;

        public Job(String id, Process process, Path release, Path running) {
            this.id = id;
            this.process = process;
            this.release = release;
            this.running = running;
        }

        void awaitRunning() throws InterruptedException, IOException, Refused {
            for (int i = 0; i < 400 && !Files.exists(running) && process.isAlive(); i++) {
                Thread.sleep(10);
            }
            if (!Files.exists(running)) {
                finish();
                throw new Refused("demo: job " + id + " did not start");
            }
            report(Files.readString(running), -1);
            out.println("   (keeps running)");
        }

        void finish() throws InterruptedException, IOException {
            Files.writeString(release, "");
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            String all = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (running == null || !Files.exists(running)) {
                report(all, process.exitValue());
            }
        }

        private void report(String output, int exit) {
            List<String> saw = new ArrayList<>();
            List<String> other = new ArrayList<>();
            for (String line : output.split("\n")) {
                if (line.startsWith("saw ")) {
                    saw.add(line.substring(4));
                } else if (!line.isBlank()) {
                    other.add(line.strip());
                }
            }
            other.forEach(l -> out.println("   " + l));
            if (exit == 99) {
                out.println("   -> exit 99: the host cannot serve it now; execd reschedules it (the scheduler keeps it"
                        + " pending)");
            } else if (exit == 100) {
                out.println("   -> exit 100: the request is refused; execd puts the job in error state");
            } else {
                out.println("   job " + id + " saw " + (saw.isEmpty() ? "no SGE_HGR_ variable" : String.join(", ", saw)));
                policy(id);
            }
        }
    }

    private Job start(Path socket, String id, String request, boolean hold) throws IOException {
        Path release = dir.resolve("release-" + id + "-" + System.nanoTime());
        Path running = hold ? dir.resolve("running-" + id) : null;
        String show = "env | grep '^SGE_HGR_' | sort | sed 's/^/saw /'";
        String script = hold ? "{ " + show + "; } > " + running + ".tmp && mv " + running + ".tmp " + running
                + "; while [ ! -e " + release + " ]; do sleep 0.02; done" : show;
        String prefix = root ? "root@" : "";
        List<String> cmd = new ArrayList<>(List.of(stub.toString(), "--spool", dir.resolve("spool").toString(), "--host",
                "node01", "--job", id, "--cwd", "/", "--tmpdir", dir.toString(), "--prolog", prefix + hook + " prolog",
                "--starter", starter.toString(), "--epilog", prefix + hook + " epilog", "--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("RSMAP_SOCKET", socket.toString());
        pb.environment().put("RSMAP_REQUEST", request);
        pb.environment().put("SGE_HGR_gpu", "evil"); // what a job brings along never reaches it
        grants.remove(id);
        return new Job(id, pb.start(), release, running);
    }

    /** The event stream: the grants, to show each job's device policy. */
    private void watch(Client events) {
        try {
            events.stream(Code.START_EVENTS, f -> {
                try {
                    JsonNode e = JSON.readTree(f.text(0));
                    if (e.path("event").asText().equals("grant")) {
                        grants.put(e.path("job").asText(), e.path("grants"));
                    }
                } catch (IOException ignored) {
                    // a STATE or a diff we do not show
                }
            });
        } catch (IOException | Client.Refusal e) {
            // the daemon closed: the demo is over
        }
    }

    private void policy(String job) {
        JsonNode g = null;
        for (int i = 0; i < 100 && g == null; i++) {
            g = grants.get(job);
            if (g == null) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        if (g == null) {
            return;
        }
        List<Instance> granted = new ArrayList<>();
        g.path("node01").fields().forEachRemaining(m -> host.resourceMap(m.getKey()).ifPresent(rm -> {
            for (JsonNode id : m.getValue()) {
                rm.instance(id.asText()).ifPresent(granted::add);
            }
        }));
        DevicePolicy p = DevicePolicy.of(granted);
        if (p.isOpen()) {
            out.println("   device policy: none (no granted instance has devices): not restricted");
            return;
        }
        List<String> allow = new ArrayList<>(p.systemdLines());
        allow.removeIf(l -> !l.startsWith("DeviceAllow="));
        out.println("   device policy: closed; " + String.join(", ", allow).replace("DeviceAllow=", "")
                + (p.missing().isEmpty() ? "" : "; not on this machine, left out (never widened): "
                        + String.join(" ", p.missing())));
    }
}
