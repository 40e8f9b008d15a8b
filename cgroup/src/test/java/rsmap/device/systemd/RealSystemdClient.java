// The client half of RealSystemdIT: a JVM started inside the PID namespace of the test's systemd
// (nsenter -t <init> -p), driving SystemdBackend on that systemd's private socket, reached through
// /proc/<init>/root/run/systemd/private (its address is the first argument). It has to run inside
// the PID namespace: systemd's private socket authenticates a peer by SO_PEERCRED, and a peer outside
// its PID namespace shows PID 0, which sd-bus takes for missing credentials (the connection is reset).
package rsmap.device.systemd;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import rsmap.device.DeviceBackend.Availability;
import rsmap.device.DevicePolicy;
import rsmap.device.FakeDevices;

/**
 * One command a line on stdin, one answer a line on stdout ({@code ok ...} or {@code error ...}):
 * {@code availability}, {@code apply <job> <pid> <complex_values>}, {@code apply-basics <job> <pid>} (the
 * closed policy of a job holding nothing), {@code update <job> <complex_values>}, {@code close <job>} (the
 * same closed policy, as rsmapd sets it on what a job left at its end), {@code processes <job>} (the PIDs,
 * blank-separated; {@code ok -} when the backend cannot list them), {@code remove <job>}; EOF ends it.
 */
public final class RealSystemdClient {
    private RealSystemdClient() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String address = args.length > 0 ? args[0] : SystemdBackend.PRIVATE_SOCKET;
        try (SystemdBackend backend = new SystemdBackend(address, true,
                SystemdBackend.NO_EXISTING_SCOPE)) {
            out.println("ready");
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.strip().split(" ", 4);
                try {
                    switch (w[0]) {
                        case "availability" -> {
                            Availability a = backend.availability();
                            out.println((a.available() ? "ok " : "error ") + a.reason());
                        }
                        case "apply" -> {
                            backend.apply(w[1], DevicePolicy.of(FakeDevices.instances(w[3])), Long.parseLong(w[2]));
                            out.println("ok " + backend.unitOf(w[1]).orElse(""));
                        }
                        case "apply-basics" -> {
                            backend.apply(w[1], FakeDevices.basicsOnly(), Long.parseLong(w[2]));
                            out.println("ok " + backend.unitOf(w[1]).orElse(""));
                        }
                        case "update" -> {
                            backend.update(w[1], DevicePolicy.of(FakeDevices.instances(line.strip().split(" ", 3)[2])));
                            out.println("ok " + backend.unitOf(w[1]).orElse(""));
                        }
                        case "close" -> {
                            backend.update(w[1], FakeDevices.basicsOnly());
                            out.println("ok " + backend.unitOf(w[1]).orElse(""));
                        }
                        case "processes" -> out.println("ok " + backend.processes(w[1]).map(p -> p.stream()
                                .map(String::valueOf).collect(java.util.stream.Collectors.joining(" "))).orElse("-"));
                        case "remove" -> {
                            backend.remove(w[1]);
                            out.println("ok " + backend.unitOf(w[1]).orElse(""));
                        }
                        default -> out.println("error unknown command: " + line);
                    }
                } catch (Exception e) {
                    out.println("error " + e.toString().replace('\n', ' '));
                }
            }
        }
    }
}
