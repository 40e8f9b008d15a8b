// What a submission with a filter pays for placement: one call of the C rsmap-place against one call of the
// Java `rsmap place` (bin/rsmap, a JVM start), the same filter to the same authority (bin/rsmapd, role =
// authority, two hosts registered), interleaved; each call is an exec pinned to its own core. Beside them the
// C client's two parts: its exec alone (--help) and the exchange alone (connect, INIT, PLACE from this JVM),
// and the same PLACE by the Lua module job_submit.lua loads into slurmctld (rsmap_place.so, no process), its
// place() timed in a Lua 5.1 host (bridge/target/lua-run) on the same core.
package rsmap.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Args: {@code [RUNS] [CPU]} - calls of each (default 30), the core the calls run on (default 1). */
public final class PlaceCall {
    private static final int WARM = 200;

    private PlaceCall() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        String cpu = args.length > 1 ? args[1] : "1";
        Path dir = Files.createTempDirectory("rsmap-bench-place");
        try (Rsmapd authority = Rsmapd.start(Rsmapd.configureAuthority(dir, "lic=1(la)", rsmap.wire.Ports.free(),
                "reconcile_interval = 0").getParent())) {
            try (rsmap.wire.Client c = rsmap.wire.Client.connect(authority.socket())) {
                for (String[] h : new String[][] {{"node01", "x86_64", "2.4GHz"}, {"node02", "aarch64", "1.8GHz"}}) {
                    c.call(rsmap.wire.Code.REGISTER, "{\"host\":\"" + h[0] + "\",\"state\":{\"maps\":{},\"jobs\":[],"
                            + "\"complex_values\":\"gpu=2(0 1)\",\"attributes\":{\"arch\":\"" + h[1]
                            + "\",\"cpu_speed\":\"" + h[2] + "\"}}}");
                }
            }
            String sock = authority.socket().toString();
            List<String> filter = List.of("--filter", "cpu_speed > 2GHz", "--json", "--socket", sock);
            List<String> c = command(cpu, Rsmapd.ROOT.resolve("bridge/target/rsmap-place").toString(), filter);
            List<String> java = command(cpu, Rsmapd.ROOT.resolve("bin/rsmap").toString() + " place", filter);
            // where the C client's time goes: the same exec answering --help (exec, static start, exit: no
            // socket), and the exchange alone in this JVM (connect, INIT, PLACE: the socket and the authority)
            List<String> exec = command(cpu, Rsmapd.ROOT.resolve("bridge/target/rsmap-place").toString(), List.of("--help"));
            Path socket = authority.socket();
            String arg = "{\"filter\":\"cpu_speed > 2GHz\"}";
            for (int w = 0; w < WARM; w++) { // the authority's PLACE compiled, as in a running cluster
                exchange(socket, arg);
            }
            time(c);
            time(java);
            time(exec);
            long[] tc = new long[runs];
            long[] tj = new long[runs];
            long[] te = new long[runs];
            long[] tx = new long[runs];
            for (int r = 0; r < runs; r++) {
                tc[r] = time(c);
                tj[r] = time(java);
                te[r] = time(exec);
            }
            for (int r = 0; r < runs; r++) { // apart: no JVM starting or ending beside it
                tx[r] = exchange(socket, arg);
            }
            System.out.printf("placement at submission: one PLACE with a filter, exec to exit, %d calls each, on cpu %s%n",
                    runs, cpu);
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms%n", "rsmap place (Java, bin/rsmap)", ms(tj, 50), ms(tj, 90));
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms  (%.4fx)%n", "rsmap-place (C)", ms(tc, 50), ms(tc, 90),
                    ms(tc, 50) / ms(tj, 50));
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms%n", "  of it: rsmap-place --help (the exec)", ms(te, 50),
                    ms(te, 90));
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms%n", "  of it: connect, INIT+PLACE (in-process)",
                    ms(tx, 50), ms(tx, 90));
            double[] lua = module(cpu, sock, runs);
            System.out.printf("  %-40s median %8.2f ms  p90 %8.2f ms  (%.2fx rsmap-place)%n",
                    "rsmap_place.so place() (Lua, no process)", lua[0], lua[1], lua[0] / ms(tc, 50));
        } finally {
            rsmap.daemon.Trees.delete(dir);
        }
    }

    /**
     * One exchange as rsmap-place makes it, from this JVM: connect, INIT and PLACE written together, frames
     * read up to PLACE's OK; the STATE checked. Its wall time.
     */
    private static long exchange(Path socket, String arg) throws Exception {
        long t0 = System.nanoTime();
        String answer = null;
        try (java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            ch.connect(java.net.UnixDomainSocketAddress.of(socket));
            byte[] init = rsmap.wire.Frame.of(1, rsmap.wire.Code.INIT.value(), "1").encode();
            byte[] place = rsmap.wire.Frame.of(2, rsmap.wire.Code.PLACE.value(), arg).encode();
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(init.length + place.length).put(init).put(place).flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
            while (true) {
                String body = new String(read(ch, Integer.parseInt(new String(read(ch, 8), "US-ASCII"), 16)),
                        java.nio.charset.StandardCharsets.UTF_8);
                long tid = Long.parseLong(body.substring(0, 8), 16);
                int code = Integer.parseInt(body.substring(8, 12), 16);
                if (tid == 2 && code == rsmap.wire.Code.STATE.value()) {
                    answer = body;
                } else if (tid == 2 && (code == rsmap.wire.Code.OK.value() || code == rsmap.wire.Code.ERROR.value())) {
                    break;
                }
            }
        }
        long t = System.nanoTime() - t0;
        if (answer == null || !answer.contains("\"pass\":[\"node01\"]")) {
            throw new IllegalStateException("PLACE answered " + answer);
        }
        return t;
    }

    /**
     * place() of rsmap_place.so, as job_submit.lua calls it, in a Lua 5.1 host pinned to {@code cpu}: the
     * authority warmed by WARM calls, then {@code runs} timed. Median and p90 in ms.
     */
    private static double[] module(String cpu, String socket, int runs) throws Exception {
        Path script = Files.createTempFile("place-call", ".lua");
        try {
            Files.writeString(script, String.join("\n",
                    "local place = assert(package.loadlib(arg[1], 'luaopen_rsmap_place'))().place",
                    "local runs, t = tonumber(arg[3]), {}",
                    "for i = 1, " + WARM + " + runs do",
                    "  local t0 = now()",
                    "  local line = place('cpu_speed > 2GHz', nil, arg[2], 30)",
                    "  if i > " + WARM + " then t[#t + 1] = (now() - t0) * 1000 end",
                    "  assert(line and line:find('\"pass\":[\"node01\"]', 1, true), line)",
                    "end",
                    "table.sort(t)",
                    "io.write(t[math.ceil(#t * 0.5)], ' ', t[math.ceil(#t * 0.9)], '\\n')", ""));
            List<String> cmd = command(cpu, Rsmapd.ROOT.resolve("bridge/target/lua-run").toString(), List.of(
                    script.toString(), Rsmapd.ROOT.resolve("bridge/target/rsmap_place.so").toString(), socket,
                    Integer.toString(runs)));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(cmd + ": " + said);
            }
            String[] f = said.strip().split(" ");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1])};
        } finally {
            Files.deleteIfExists(script);
        }
    }

    private static byte[] read(java.nio.channels.SocketChannel ch, int n) throws java.io.IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new java.io.EOFException("the authority closed the connection");
            }
        }
        return b.array();
    }

    private static List<String> command(String cpu, String program, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("taskset", "-c", cpu));
        cmd.addAll(Arrays.asList(program.split(" ")));
        cmd.addAll(args);
        return cmd;
    }

    private static long time(List<String> cmd) throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        int exit = p.waitFor();
        long t = System.nanoTime() - t0;
        String said = new String(out, java.nio.charset.StandardCharsets.UTF_8);
        if (exit != 0 || !(said.contains("\"pass\":[\"node01\"]") || cmd.contains("--help") && said.startsWith("Usage"))) {
            throw new IllegalStateException(cmd + " exited " + exit + ": " + said);
        }
        return t;
    }

    private static double ms(long[] t, int percentile) {
        long[] s = t.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * percentile / 100)] / 1e6;
    }
}
