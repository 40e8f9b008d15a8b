// docs/gpus.md, "Node filters": two hosts whose stand-in NVML reports different cards register with a real
// authority (MUNGE over loopback TCP); `rsmap place` with a filter on gpu_model and nvidia_driver passes
// the host with that card only.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rsmap.munge.MungeD;
import rsmap.wire.Ports;

@Timeout(180)
class GpuPlaceIT {
    Path shared;
    MungeD munged;
    Process authority;
    final List<Daemon> hosts = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (Daemon d : hosts) {
            d.close();
        }
        if (authority != null) {
            authority.destroyForcibly().waitFor();
        }
        if (munged != null) {
            munged.close();
        }
        if (shared != null) {
            try (Stream<Path> all = Files.walk(shared)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** A host whose NVML reports two cards of {@code model}; discovery on, so that its attributes say so. */
    private void host(String name, int port, String model) throws Exception {
        GpuStub.use(shared.resolve(name + ".json"), GpuStub.description(List.of(GpuStub.card(0, model, false),
                GpuStub.card(1, model, false))));
        Config c = TestDaemon.config(shared.resolve(name), "NONE", "host = " + name, "authority = 127.0.0.1:" + port,
                "munge_socket = " + munged.socket(), "reconcile_interval = 0", "discover = on",
                "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu", "gpu_dev_dir = " + shared.resolve("dev"));
        hosts.add(TestDaemon.start(c));
    }

    @Test
    void aFilterOnGpuModel_passesTheHostWithThatCard() throws Exception {
        ExecdStubIT.jobUser();
        munged = MungeD.start();
        shared = Files.createTempDirectory("rsmap-gpu-place", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.createDirectories(shared.resolve("dev"));
        int port = Ports.free();
        Path dir = shared.resolve("authority");
        AuthorityTest.authorityConfig(dir, port, "lic=1(la)", "munge_socket = " + munged.socket());
        authority = RsmapdProcess.start(dir.resolve("rsmapd.conf"), dir.resolve("rsmapd.sock"), dir.resolve("log"));
        host("node01", port, "NVIDIA A100-SXM4-80GB");
        host("node02", port, "NVIDIA H200");
        String sock = dir.resolve("rsmapd.sock").toString();
        String filter = "gpu_model == \"NVIDIA H200\" && nvidia_driver >= 550 && gpus >= 2";
        String out = "";
        for (int i = 0; i < 200 && !out.contains("1 hosts pass"); i++) {
            Thread.sleep(50); // both hosts register after their connect
            out = AuthorityIT.rsmap("place", "--socket", sock, "--filter", filter);
        }
        assertThat(out).contains("1 hosts pass: node02").contains("node01 fails (job)").endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("place", "--socket", sock, "--filter", "gpu_model == \"NVIDIA A100-SXM4-80GB\"",
                "--request", "gpu=2")).contains("can start now on node01").endsWith("exit=0");
        // the registration carries what each host's NVML reported
        String cluster = AuthorityIT.rsmap("status", "--cluster", "--json", "--socket", sock);
        JsonNode hostsJson = new ObjectMapper().readTree(cluster.substring(0, cluster.lastIndexOf("exit=")))
                .path("hosts");
        assertThat(hostsJson.path("node02").path("nvidia").path("driver").asText()).isEqualTo("550.54.15");
        assertThat(hostsJson.path("node02").path("nvidia").path("gpus").get(1).path("model").asText())
                .isEqualTo("NVIDIA H200");
        assertThat(hostsJson.path("node01").path("nvidia").path("gpus").get(0).path("uuid").asText())
                .isEqualTo(GpuStub.uuid(0));
    }
}
