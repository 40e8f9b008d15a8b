// What NVML said of the host at one discovery: the driver, its CUDA version, the cards, the cards it could not read.
package rsmap.device.nvml;

import java.util.List;
import java.util.Objects;

/**
 * @param driver   nvmlSystemGetDriverVersion, e.g. 550.54.15
 * @param cuda     nvmlSystemGetCudaDriverVersion_v2 as major.minor, e.g. 12.4
 * @param gpus     the cards read, in NVML's index order
 * @param unread   one line per card that answered an error (a lost card: GPU is lost), left out of gpus
 */
public record Inventory(String driver, String cuda, List<Gpu> gpus, List<String> unread) {
    public Inventory {
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(cuda, "cuda");
        gpus = List.copyOf(gpus);
        unread = List.copyOf(unread);
    }
}
