// The calls of NVML (libnvidia-ml.so.1) the GPU layer makes, bound through JNA from nvml.h: only these.
package rsmap.device.nvml;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * nvml.h's signatures: {@code nvmlReturn_t} is an enum (an int), {@code nvmlDevice_t} an opaque pointer,
 * {@code unsigned int} an int read unsigned. The versioned names ({@code _v2}, {@code _v3}) are the ones
 * nvml.h's macros map the plain names to; every driver since 2015 exports them.
 */
interface NvmlLibrary extends Library {
    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlSystemGetDriverVersion(byte[] version, int length);

    int nvmlSystemGetCudaDriverVersion_v2(IntByReference cudaDriverVersion);

    int nvmlDeviceGetCount_v2(IntByReference deviceCount);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    int nvmlDeviceGetUUID(Pointer device, byte[] uuid, int length);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetMinorNumber(Pointer device, IntByReference minorNumber);

    int nvmlDeviceGetMemoryInfo(Pointer device, Memory memory);

    int nvmlDeviceGetPciInfo_v3(Pointer device, PciInfo pci);

    int nvmlDeviceGetCudaComputeCapability(Pointer device, IntByReference major, IntByReference minor);

    /** Newer drivers only, and only where GPUs are NUMA nodes; else NOT_SUPPORTED (or no such symbol). */
    int nvmlDeviceGetNumaNodeId(Pointer device, IntByReference node);

    // Health (docs/gpus.md, "Health"): the events of a sick card, and the calls the recheck asks.

    int nvmlDeviceGetHandleByUUID(String uuid, PointerByReference device);

    /** Ampere and later; NOT_SUPPORTED elsewhere and under MIG. */
    int nvmlDeviceGetRemappedRows(Pointer device, IntByReference corrRows, IntByReference uncRows,
                                  IntByReference isPending, IntByReference failureOccurred);

    /** errorType nvmlMemoryErrorType_t, counterType nvmlEccCounterType_t; NOT_SUPPORTED without ECC. */
    int nvmlDeviceGetTotalEccErrors(Pointer device, int errorType, int counterType, LongByReference eccCounts);

    int nvmlDeviceGetSupportedEventTypes(Pointer device, LongByReference eventTypes);

    int nvmlEventSetCreate(PointerByReference set);

    int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

    int nvmlEventSetWait_v2(Pointer set, EventData data, int timeoutms);

    /** Drivers before R450 only (its nvmlEventData_t ends before the instance ids, which stay unread). */
    int nvmlEventSetWait(Pointer set, EventData data, int timeoutms);

    int nvmlEventSetFree(Pointer set);

    /** nvml.h, nvmlEventData_t. */
    @Structure.FieldOrder({"device", "eventType", "eventData", "gpuInstanceId", "computeInstanceId"})
    final class EventData extends Structure {
        public Pointer device;
        public long eventType;
        public long eventData;
        public int gpuInstanceId;
        public int computeInstanceId;
    }

    /** nvml.h, nvmlMemory_t: bytes. */
    @Structure.FieldOrder({"total", "free", "used"})
    final class Memory extends Structure {
        public long total;
        public long free;
        public long used;
    }

    /** nvml.h, nvmlPciInfo_t (NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32). */
    @Structure.FieldOrder({"busIdLegacy", "domain", "bus", "device", "pciDeviceId", "pciSubSystemId", "busId"})
    final class PciInfo extends Structure {
        public byte[] busIdLegacy = new byte[16];
        public int domain;
        public int bus;
        public int device;
        public int pciDeviceId;
        public int pciSubSystemId;
        public byte[] busId = new byte[32];
    }
    // MIG (docs/gpus.md, "Partitions on demand"): GPU instances, compute instances, MIG device handles.

    int nvmlDeviceGetMigMode(Pointer device, IntByReference currentMode, IntByReference pendingMode);

    int nvmlDeviceGetGpuInstanceProfileInfoV(Pointer device, int profile, GpuInstanceProfileInfo info);

    int nvmlDeviceGetGpuInstancePossiblePlacements_v2(Pointer device, int profileId, int[] placements,
                                                       IntByReference count);

    int nvmlDeviceCreateGpuInstanceWithPlacement(Pointer device, int profileId, int[] placement,
                                                 PointerByReference gpuInstance);

    int nvmlGpuInstanceDestroy(Pointer gpuInstance);

    int nvmlDeviceGetGpuInstances(Pointer device, int profileId, Pointer[] gpuInstances, IntByReference count);

    int nvmlGpuInstanceGetInfo(Pointer gpuInstance, GpuInstanceInfo info);

    int nvmlGpuInstanceGetComputeInstanceProfileInfoV(Pointer gpuInstance, int profile, int engProfile,
                                                      ComputeInstanceProfileInfo info);

    int nvmlGpuInstanceCreateComputeInstance(Pointer gpuInstance, int profileId, PointerByReference computeInstance);

    int nvmlComputeInstanceDestroy(Pointer computeInstance);

    int nvmlGpuInstanceGetComputeInstances(Pointer gpuInstance, int profileId, Pointer[] computeInstances,
                                           IntByReference count);

    int nvmlComputeInstanceGetInfo_v2(Pointer computeInstance, ComputeInstanceInfo info);

    int nvmlDeviceGetMaxMigDeviceCount(Pointer device, IntByReference count);

    int nvmlDeviceGetMigDeviceHandleByIndex(Pointer device, int index, PointerByReference migDevice);

    int nvmlDeviceGetGpuInstanceId(Pointer migDevice, IntByReference id);

    int nvmlDeviceGetComputeInstanceId(Pointer migDevice, IntByReference id);

    /** nvml.h, nvmlGpuInstanceProfileInfo_v2_t; {@code version} is NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2). */
    @Structure.FieldOrder({"version", "id", "isP2pSupported", "sliceCount", "instanceCount", "multiprocessorCount",
        "copyEngineCount", "decoderCount", "encoderCount", "jpegCount", "ofaCount", "memorySizeMB", "name"})
    final class GpuInstanceProfileInfo extends Structure {
        /** NVML_STRUCT_VERSION: the structure's size (152 bytes on 64-bit) | 2 << 24. */
        static final int VERSION_2 = 152 | 2 << 24;
        public int version = VERSION_2;
        public int id;
        public int isP2pSupported;
        public int sliceCount;
        public int instanceCount;
        public int multiprocessorCount;
        public int copyEngineCount;
        public int decoderCount;
        public int encoderCount;
        public int jpegCount;
        public int ofaCount;
        public long memorySizeMB;
        public byte[] name = new byte[96];
    }

    /** nvml.h, nvmlComputeInstanceProfileInfo_v2_t; {@code version} as for the GPU instance's. */
    @Structure.FieldOrder({"version", "id", "sliceCount", "instanceCount", "multiprocessorCount",
        "sharedCopyEngineCount", "sharedDecoderCount", "sharedEncoderCount", "sharedJpegCount", "sharedOfaCount", "name"})
    final class ComputeInstanceProfileInfo extends Structure {
        /** NVML_STRUCT_VERSION: the structure's size (136 bytes) | 2 << 24. */
        static final int VERSION_2 = 136 | 2 << 24;
        public int version = VERSION_2;
        public int id;
        public int sliceCount;
        public int instanceCount;
        public int multiprocessorCount;
        public int sharedCopyEngineCount;
        public int sharedDecoderCount;
        public int sharedEncoderCount;
        public int sharedJpegCount;
        public int sharedOfaCount;
        public byte[] name = new byte[96];
    }

    /** nvml.h, nvmlGpuInstanceInfo_t (its placement's start and size inline). */
    @Structure.FieldOrder({"device", "id", "profileId", "start", "size"})
    final class GpuInstanceInfo extends Structure {
        public Pointer device;
        public int id;
        public int profileId;
        public int start;
        public int size;
    }

    /** nvml.h, nvmlComputeInstanceInfo_t (its placement's start and size inline). */
    @Structure.FieldOrder({"device", "gpuInstance", "id", "profileId", "start", "size"})
    final class ComputeInstanceInfo extends Structure {
        public Pointer device;
        public Pointer gpuInstance;
        public int id;
        public int profileId;
        public int start;
        public int size;
    }
}
