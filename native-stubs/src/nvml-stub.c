/* nvml-stub: a stand-in libnvidia-ml.so.1 driven by a JSON description, so that rsmapd's GPU layer runs
 * on hosts without a GPU and cannot tell it from a driver: the names, signatures, struct layouts and
 * return codes are nvml.h's (NVIDIA's header, as vendored by github.com/NVIDIA/go-nvml).
 *
 * At nvmlInit_v2 it reads the file named by $RSMAP_NVML_STUB (native-stubs/README.md has the contract):
 *   {"driver":"550.54.15","cuda":"12.4","gpus":[{"uuid":"GPU-...","name":"NVIDIA A100-SXM4-80GB",
 *     "minor":0,"memory_mib":81920,"pci_bus_id":"00000000:3B:00.0","numa_node":0,
 *     "compute_capability":"8.0"}]}
 * A missing or unreadable file: NVML_ERROR_LIBRARY_NOT_FOUND. "init_error": "NAME" (an NVML error name
 * without NVML_ERROR_): nvmlInit_v2 fails with it. A card's "lost": true: its calls answer
 * NVML_ERROR_GPU_IS_LOST. The order of "gpus" is NVML's index order. A card without "numa_node" answers
 * NVML_ERROR_NOT_SUPPORTED to nvmlDeviceGetNumaNodeId, as a PCIe card does on a real driver. The file is
 * read again at every nvmlInit_v2 (also while another client holds NVML initialised, as rsmapd's event
 * watcher does), so a test can change it; handles stay valid. */
#include "nvml-mig.h"
#include "stub-json.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvml.h, nvmlReturn_t. */
enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NO_PERMISSION = 4, NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9, NVML_ERROR_TIMEOUT = 10, NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12, NVML_ERROR_FUNCTION_NOT_FOUND = 13, NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15, NVML_ERROR_RESET_REQUIRED = 16, NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18, NVML_ERROR_IN_USE = 19, NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21, NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22, NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24, NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25, NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27, NVML_ERROR_GPU_NOT_FOUND = 28, NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30, NVML_ERROR_UNKNOWN = 999
};

/* nvml.h, nvmlPciInfo_t and nvmlMemory_t, field for field. */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* Names and texts of the return codes (the texts as a driver's nvmlErrorString words them). */
static const struct { int code; const char *name; const char *text; } codes[] = {
    {NVML_SUCCESS, "SUCCESS", "Success"},
    {NVML_ERROR_UNINITIALIZED, "UNINITIALIZED", "Uninitialized"},
    {NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT", "Invalid Argument"},
    {NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", "Not Supported"},
    {NVML_ERROR_NO_PERMISSION, "NO_PERMISSION", "Insufficient Permissions"},
    {NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED", "Already Initialized"},
    {NVML_ERROR_NOT_FOUND, "NOT_FOUND", "Not Found"},
    {NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {NVML_ERROR_TIMEOUT, "TIMEOUT", "Timeout"},
    {NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE", "Interrupt request issue"},
    {NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST", "GPU is lost"},
    {NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED", "GPU requires restart"},
    {NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM", "The operating system has blocked the request."},
    {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."},
    {NVML_ERROR_IN_USE, "IN_USE", "In use by another client"},
    {NVML_ERROR_MEMORY, "MEMORY", "Insufficient Memory"},
    {NVML_ERROR_NO_DATA, "NO_DATA", "No data"},
    {NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "VGPU_ECC_NOT_SUPPORTED", "The requested vgpu operation is not available on target device, becasue ECC is enabled"},
    {NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES", "Insufficient Resources"},
    {NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED", "Frequency not supported"},
    {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    {NVML_ERROR_DEPRECATED, "DEPRECATED", "Deprecated"},
    {NVML_ERROR_NOT_READY, "NOT_READY", "Not ready"},
    {NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND", "GPU not found"},
    {NVML_ERROR_INVALID_STATE, "INVALID_STATE", "Invalid state"},
    {NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "RESET_TYPE_NOT_SUPPORTED", "Reset type not supported"},
    {NVML_ERROR_UNKNOWN, "UNKNOWN", "Unknown Error"},
};

/* One card: a handle points at it. Its fields are read from the description when asked for, so that later
 * keys (health, MIG) only add readers. */
struct nvmlDevice_st {
    const struct json *desc;
};

#define MAX_GPUS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;                 /* nvmlInit_v2 calls not yet matched by nvmlShutdown */
static struct json *description; /* the parsed file while refs > 0 */
/* Descriptions replaced while initialised (a handle may still be read): freed at the last nvmlShutdown. */
static struct json *retired[64];
static unsigned nretired;
static struct nvmlDevice_st devices[MAX_GPUS];
static unsigned ndevices;

static int code_of(const char *name) {
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (strcmp(codes[i].name, name) == 0) return codes[i].code;
    return -1;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (codes[i].code == result) return codes[i].text;
    return "Unknown Error";
}

/* Reads and checks the description; a file that is not what the contract says is the stand-in's own
 * fault, said on stderr, and NVML_ERROR_UNKNOWN. */
static nvmlReturn_t load(void) {
    const char *path = getenv("RSMAP_NVML_STUB");
    if (!path || !*path) return NVML_ERROR_LIBRARY_NOT_FOUND;
    char *text = json_read_file(path);
    if (!text) return NVML_ERROR_LIBRARY_NOT_FOUND;
    char err[160];
    struct json *d = json_parse(text, err, sizeof err);
    free(text);
    if (!d || d->kind != JSON_OBJECT) {
        fprintf(stderr, "nvml-stub: %s: %s\n", path, d ? "not a JSON object" : err);
        json_free(d);
        return NVML_ERROR_UNKNOWN;
    }
    const struct json *init_error = json_get(d, "init_error");
    if (init_error && init_error->kind == JSON_STRING) {
        int code = code_of(init_error->string);
        json_free(d);
        if (code < 0) {
            fprintf(stderr, "nvml-stub: %s: init_error names no NVML error\n", path);
            return NVML_ERROR_UNKNOWN;
        }
        return code;
    }
    const struct json *gpus = json_get(d, "gpus");
    if (gpus && (gpus->kind != JSON_ARRAY || gpus->n > MAX_GPUS)) {
        fprintf(stderr, "nvml-stub: %s: gpus is not an array of at most %d cards\n", path, MAX_GPUS);
        json_free(d);
        return NVML_ERROR_UNKNOWN;
    }
    if (description && nretired < sizeof retired / sizeof *retired) retired[nretired++] = description;
    description = d;
    ndevices = gpus ? (unsigned)gpus->n : 0;
    for (unsigned i = 0; i < ndevices; i++) devices[i].desc = gpus->items[i];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t r = load(); /* read again at every init: another client may hold NVML initialised */
    if (r == NVML_SUCCESS) refs++;
    pthread_mutex_unlock(&lock);
    return r;
}

nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t r = NVML_SUCCESS;
    if (refs == 0) r = NVML_ERROR_UNINITIALIZED;
    else if (--refs == 0) {
        json_free(description);
        description = NULL;
        ndevices = 0;
        while (nretired > 0) json_free(retired[--nretired]);
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static const char *text_of(const struct json *object, const char *key) {
    const struct json *v = json_get(object, key);
    return v && v->kind == JSON_STRING ? v->string : NULL;
}

static int number_of(const struct json *object, const char *key, double *out) {
    const struct json *v = json_get(object, key);
    if (!v || v->kind != JSON_NUMBER) return 0;
    *out = v->number;
    return 1;
}

/* Copies s into a caller's buffer of length bytes, NUL included, as NVML does. */
static nvmlReturn_t copy_out(const char *s, char *buf, unsigned int length) {
    if (!buf) return NVML_ERROR_INVALID_ARGUMENT;
    if (!s) return NVML_ERROR_NOT_SUPPORTED;
    if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(buf, s);
    return NVML_SUCCESS;
}

/* "12.4" as CUDA's integer 12040, "8.0" as 8 and 0. */
static int version_of(const char *s, int *major, int *minor) {
    return s && sscanf(s, "%d.%d", major, minor) == 2;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (refs == 0) return NVML_ERROR_UNINITIALIZED;
    return copy_out(text_of(description, "driver"), version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion) {
    if (refs == 0) return NVML_ERROR_UNINITIALIZED;
    if (!cudaDriverVersion) return NVML_ERROR_INVALID_ARGUMENT;
    int major, minor;
    if (!version_of(text_of(description, "cuda"), &major, &minor)) return NVML_ERROR_NOT_SUPPORTED;
    *cudaDriverVersion = major * 1000 + minor * 10;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion) {
    return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    if (refs == 0) return NVML_ERROR_UNINITIALIZED;
    if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = ndevices;
    return NVML_SUCCESS;
}

static int lost(const struct nvmlDevice_st *d) {
    const struct json *v = json_get(d->desc, "lost");
    return v && v->kind == JSON_BOOL && v->boolean;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (refs == 0) return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= ndevices) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(&devices[index])) return NVML_ERROR_GPU_IS_LOST;
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* Every call on a card: initialised, a handle of ours, the card not lost. */
static nvmlReturn_t check(nvmlDevice_t device) {
    if (refs == 0) return NVML_ERROR_UNINITIALIZED;
    if (device < devices || device >= devices + ndevices) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(device)) return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    nvmlReturn_t r;
    if (nvml_mig_device_uuid(device, uuid, length, &r)) return r; /* a MIG device's handle (nvml-mig.c) */
    r = check(device);
    return r ? r : copy_out(text_of(device->desc, "uuid"), uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    nvmlReturn_t r = check(device);
    return r ? r : copy_out(text_of(device->desc, "name"), name, length);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber) {
    nvmlReturn_t r = check(device);
    if (r) return r;
    double minor;
    if (!minorNumber) return NVML_ERROR_INVALID_ARGUMENT;
    if (!number_of(device->desc, "minor", &minor)) return NVML_ERROR_NOT_SUPPORTED;
    *minorNumber = (unsigned)minor;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    nvmlReturn_t r = check(device);
    if (r) return r;
    double mib;
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    if (!number_of(device->desc, "memory_mib", &mib)) return NVML_ERROR_NOT_SUPPORTED;
    memory->total = (unsigned long long)mib * 1024ULL * 1024ULL;
    memory->used = 0;
    memory->free = memory->total;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    nvmlReturn_t r = check(device);
    if (r) return r;
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    const char *bus_id = text_of(device->desc, "pci_bus_id");
    if (!bus_id) return NVML_ERROR_NOT_SUPPORTED;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", bus_id);
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4) {
        pci->domain = domain;
        pci->bus = bus;
        pci->device = dev;
        snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", domain & 0xFFFF, bus, dev, fn);
    }
    pci->pciDeviceId = 0x20B510DE; /* an A100's device id with NVIDIA's vendor id */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    nvmlReturn_t r = check(device);
    if (r) return r;
    if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    return version_of(text_of(device->desc, "compute_capability"), major, minor) ? NVML_SUCCESS
                                                                                  : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node) {
    nvmlReturn_t r = check(device);
    if (r) return r;
    double numa;
    if (!node) return NVML_ERROR_INVALID_ARGUMENT;
    if (!number_of(device->desc, "numa_node", &numa)) return NVML_ERROR_NOT_SUPPORTED;
    *node = (unsigned)numa;
    return NVML_SUCCESS;
}
