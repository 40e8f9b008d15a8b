// docs/gpus.md, "Node filters": two hosts whose stand-in NVML reports different cards register with a real
// authority (MUNGE over loopback TCP); `rsmap place` with a filter on gpu_model and nvidia_driver passes
// the host with that card only.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import rsmap.daemon.authority.AuthorityIT;
import rsmap.wire.Polls;

@Timeout(180)
class GpuPlaceIT {
    @RegisterExtension
    static final AuthorityCell CELL = new AuthorityCell("rsmap-gpu-place");

    /** A host whose NVML reports two cards of {@code model}; discovery on, so that its attributes say so. */
    private void host(String name, String model) throws Exception {
        GpuStub.use(CELL.shared().resolve(name + ".json"), GpuStub.description(List.of(GpuStub.card(0, model, false),
                GpuStub.card(1, model, false))));
        CELL.startHost(name, "NONE", "discover = on", "nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu",
                "gpu_dev_dir = " + CELL.shared().resolve("dev"));
    }

    @Test
    void aFilterOnGpuModel_passesTheHostWithThatCard() throws Exception {
        CELL.startAuthority("authority", "lic=1(la)");
        Files.createDirectories(CELL.shared().resolve("dev"));
        host("node01", "NVIDIA A100-SXM4-80GB");
        host("node02", "NVIDIA H200");
        String sock = CELL.socket("authority").toString();
        String filter = "gpu_model == \"NVIDIA H200\" && nvidia_driver >= 550 && gpus >= 2";
        // both hosts register after their connect
        String out = Polls.retry(Duration.ofSeconds(60), () -> AuthorityIT.rsmap("place", "--socket", sock, "--filter",
                filter), o -> o.contains("1 hosts pass"));
        assertThat(out).contains("1 hosts pass: node02").contains("node01 fails (job)").endsWith("exit=0");
        assertThat(AuthorityIT.rsmap("place", "--socket", sock, "--filter", "gpu_model == \"NVIDIA A100-SXM4-80GB\"",
                "--request", "gpu=2")).contains("can start now on node01").endsWith("exit=0");
        // the registration carries what each host's NVML reported
        String status = AuthorityIT.rsmap("status", "--cluster", "--json", "--socket", sock);
        JsonNode hostsJson = new ObjectMapper().readTree(status.substring(0, status.lastIndexOf("exit=")))
                .path("hosts");
        assertThat(hostsJson.path("node02").path("nvidia").path("driver").asText()).isEqualTo("550.54.15");
        assertThat(hostsJson.path("node02").path("nvidia").path("gpus").get(1).path("model").asText())
                .isEqualTo("NVIDIA H200");
        assertThat(hostsJson.path("node01").path("nvidia").path("gpus").get(0).path("uuid").asText())
                .isEqualTo(GpuStub.uuid(0));
    }
}
