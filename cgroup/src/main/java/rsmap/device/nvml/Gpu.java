// One NVIDIA card as NVML reports it: what the GPU layer tells the daemon of it.
package rsmap.device.nvml;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * @param index              NVML's index (nvmlDeviceGetHandleByIndex_v2)
 * @param uuid               {@code GPU-...} (nvmlDeviceGetUUID), what CUDA_VISIBLE_DEVICES takes
 * @param model              the product name (nvmlDeviceGetName), blanks and all
 * @param minor              N of /dev/nvidiaN (nvmlDeviceGetMinorNumber)
 * @param memoryBytes        total memory (nvmlDeviceGetMemoryInfo)
 * @param pciBusId           {@code 00000000:3B:00.0} (nvmlDeviceGetPciInfo_v3's busId)
 * @param numaNode           nvmlDeviceGetNumaNodeId, else the PCI device's numa_node in sysfs; empty where
 *                           neither says (-1 in sysfs: a host with one node)
 * @param computeCapability  {@code 8.0} (nvmlDeviceGetCudaComputeCapability)
 */
public record Gpu(int index, String uuid, String model, int minor, long memoryBytes, String pciBusId,
                  OptionalInt numaNode, String computeCapability) {
    public Gpu {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(pciBusId, "pciBusId");
        Objects.requireNonNull(numaNode, "numaNode");
        Objects.requireNonNull(computeCapability, "computeCapability");
    }

    /** Total memory in whole MiB. */
    public long memoryMib() {
        return memoryBytes / (1024 * 1024);
    }

    /** The card's device node: /dev/nvidiaN under {@code devDir}. */
    public String node(String devDir) {
        return (devDir.endsWith("/") ? devDir : devDir + "/") + "nvidia" + minor;
    }
}
