// The authority's PLACE against its grants (docs/cluster.md, "PLACE"): PLACE latency with 2,000 registered
// hosts, and a host's JOB_START with a global part while `nobody` floods PLACE, against an idle authority.
package rsmap.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import rsmap.munge.MungeD;
import rsmap.wire.Code;
import rsmap.wire.Frame;
import rsmap.wire.Session;
import rsmap.wire.TestClient;

/**
 * Both daemons the packaged bin/rsmapd, a real munged. The authority knows {@code HOSTS} registered hosts
 * (REGISTER as root on its socket, each with 4 GPUs, 64 slots, one job and an arch attribute). Measured, one
 * client at a time: PLACE of {@code gpu=2} on one slot with a filter, as root (no rate), then the host's
 * {@code JOB_START gpu=1,lic=1} (and its JOB_END, not measured) idle, then during a flood: python3 as
 * nobody on 32 connections sending PLACE back to back, pinned with taskset to the last CPU where there is
 * more than one. Args: {@code [ROUNDS] [HOSTS]} (defaults 300, 2000).
 */
public final class PlaceFlood {
    private PlaceFlood() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int hosts = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        Path dir = Files.createTempDirectory("rsmap-bench-place");
        int port = rsmap.wire.Ports.free();
        try (MungeD munged = MungeD.start()) {
            Rsmapd.configureAuthority(dir.resolve("authority"), "lic=4(la lb lc ld)", port,
                    "munge_socket = " + munged.socket(), "socket_mode = 0666");
            Rsmapd.configure(dir.resolve("host"), "gpu=4(0 1 2 3)", "authority = 127.0.0.1:" + port,
                    "munge_socket = " + munged.socket());
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
            try (Rsmapd authority = Rsmapd.start(dir.resolve("authority"));
                 Rsmapd host = Rsmapd.start(dir.resolve("host"));
                 TestClient a = new TestClient(authority.socket())) {
                expectOk(a.call(Frame.of(1, Code.INIT.value(), Session.VERSION)));
                for (int h = 0; h < hosts; h++) {
                    String name = String.format("h%04d", h);
                    expectOk(a.call(Frame.of(2, Code.REGISTER.value(), "{\"host\":\"" + name + "\",\"state\":{\"host\":\""
                            + name + "\",\"complex_values\":\"gpu=4(0 1 2 3)\",\"slots\":64,\"attributes\":{\"arch\":"
                            + "\"x86_64\"},\"maps\":{},\"jobs\":[{\"job\":\"1\",\"user\":\"u\",\"slots\":1,\"grants\":{\""
                            + name + "\":{\"gpu\":[\"0\"]}}}]}}")));
                }
                Frame place = Frame.of(3, Code.PLACE.value(), "{\"request\":\"gpu=2\",\"slots\":1,\"filter\":\"arch =="
                        + " \\\"x86_64\\\"\"}");
                long[] placed = new long[rounds];
                for (int w = 0; w < 2; w++) {
                    for (int r = 0; r < rounds; r++) {
                        long t0 = System.nanoTime();
                        expectOk(a.call(place));
                        placed[r] = System.nanoTime() - t0;
                    }
                }
                System.out.printf("%-44s p50 %9.1f us  p99 %9.1f us%n", "PLACE gpu=2 (root, one at a time)",
                        pct(placed, 50) / 1e3, pct(placed, 99) / 1e3);
                long[] idle = starts(host.socket(), "i", rounds, 2);
                Path stop = dir.resolve("m").resolve("stop");
                Process flood = flood(dir, authority.socket(), place, stop);
                Thread.sleep(1000); // the benchmark's gap: let the flood build up before the measured starts
                long[] flooded;
                try {
                    flooded = starts(host.socket(), "f", rounds, 1);
                } catch (IllegalStateException e) {
                    Files.writeString(stop, "");
                    System.out.println("JOB_START gpu=1,lic=1 during the PLACE flood FAILED: " + e.getMessage());
                    return;
                }
                Files.writeString(stop, "");
                flood.waitFor(30, TimeUnit.SECONDS);
                String answered = Files.readString(dir.resolve("m").resolve("placed")).strip();
                System.out.printf("PLACE and global JOB_START with %d registered hosts, %d rounds; rsmapd JVM options %s%n",
                        hosts, rounds, host.jvmOptions());
                System.out.printf("%-44s p50 %9.1f us  p99 %9.1f us%n", "JOB_START gpu=1,lic=1, authority idle",
                        pct(idle, 50) / 1e3, pct(idle, 99) / 1e3);
                System.out.printf("%-44s p50 %9.1f us  p99 %9.1f us  p99 ratio %.2fx (target < 2x: %s); flood %s%n",
                        "JOB_START gpu=1,lic=1, PLACE flood by nobody", pct(flooded, 50) / 1e3, pct(flooded, 99) / 1e3,
                        pct(flooded, 99) / pct(idle, 99), pct(flooded, 99) < 2 * pct(idle, 99) ? "met" : "MISSED",
                        answered);
            }
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    /** The flood: placer.py as nobody, 32 connections, pinned to the last CPU where there are several. */
    private static Process flood(Path dir, Path socket, Frame place, Path stop) throws Exception {
        Path m = Files.createDirectories(dir.resolve("m"));
        Files.setPosixFilePermissions(m, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        Path init = Files.write(dir.resolve("init"), Frame.of(1, Code.INIT.value(), Session.VERSION).encode());
        Path frame = Files.write(dir.resolve("place"), place.encode());
        Path script;
        try (var in = PlaceFlood.class.getResourceAsStream("/flood/placer.py")) {
            script = Files.write(dir.resolve("placer.py"), in.readAllBytes());
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        List<String> cmd = new java.util.ArrayList<>(cpus > 1 ? List.of("taskset", "-c", Integer.toString(cpus - 1))
                : List.of());
        cmd.addAll(List.of("setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", "/usr/bin/python3",
                script.toString(), socket.toString(), "32", stop.toString(), m.resolve("placed").toString(),
                init.toString(), frame.toString()));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("placer.log").toFile()).start();
    }

    /** {@code rounds} global starts (each ended), {@code passes} times; the last pass's latencies. */
    private static long[] starts(Path socket, String prefix, int rounds, int passes) throws Exception {
        long[] t = new long[rounds];
        try (TestClient c = new TestClient(socket)) {
            expectOk(c.call(Frame.of(1, Code.INIT.value(), Session.VERSION)));
            for (int p = 0; p < passes; p++) {
                for (int r = 0; r < rounds; r++) {
                    String job = prefix + p + "-" + r;
                    long t0 = System.nanoTime();
                    expectOk(c.call(Frame.of(2, Code.JOB_START.value(), "{\"job\":\"" + job + "\",\"user\":\"bench\","
                            + "\"request\":\"gpu=1,lic=1\"}")));
                    t[r] = System.nanoTime() - t0;
                    expectOk(c.call(Frame.of(3, Code.JOB_END.value(), "{\"job\":\"" + job + "\"}")));
                }
            }
        }
        return t;
    }

    private static void expectOk(List<Frame> answer) {
        if (answer.isEmpty() || answer.get(answer.size() - 1).code() != Code.OK.value()) {
            throw new IllegalStateException("expected OK, got " + answer.stream()
                    .map(f -> f.code() + " " + (f.args().isEmpty() ? "" : new String(f.args().get(0), StandardCharsets.UTF_8)))
                    .toList());
        }
    }

    private static double pct(long[] t, int p) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }
}
