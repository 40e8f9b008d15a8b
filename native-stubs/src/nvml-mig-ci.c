/* nvml-mig-ci: the stand-in NVML's compute instances and MIG device handles (nvml-mig.c has the contract).
 * A GPU instance holds one compute instance spanning all its slices (what rsmapd creates, and what NVIDIA's
 * DRA driver creates); the MIG device of a compute instance has the UUID kept in the state file. */
#include "nvml-mig-state.h"

#include <stdio.h>
#include <string.h>

/* nvml.h, nvmlComputeInstanceProfileInfo_v2_t (136 bytes), nvmlComputeInstanceInfo_t. */
typedef struct {
    unsigned int version, id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
        sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
    char name[96];
} nvmlComputeInstanceProfileInfo_v2_t;
typedef struct { unsigned int start, size; } nvmlComputeInstancePlacement_t;
typedef struct {
    nvmlDevice_t device;
    nvmlGpuInstance_t gpuInstance;
    unsigned int id, profileId;
    nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

static struct nvmlComputeInstance_st ci_handles[MAX_CARDS][MAX_GI][MAX_CI];
static struct mig_device mig_handles[MAX_CARDS][MAX_GI][MAX_CI];

/* nvml.h: NVML_COMPUTE_INSTANCE_PROFILE_{1,2,3,4,7,8,6}_SLICE. */
static const unsigned ci_slices[] = {1, 2, 3, 4, 7, 8, 6};

/* The slices of the GPU instance of rec. */
static unsigned gi_slices(const struct card *c, const struct record *rec) {
    const struct json *p = profile_by(c, -1, -1, rec->profile);
    return p ? (unsigned)num(p, "slices", 1) : 1;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                           unsigned int engProfile,
                                                           nvmlComputeInstanceProfileInfo_v2_t *info) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = gi_record(gpuInstance, &s, &c, &rec);
    if (!r && (!info || engProfile != 0)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (!r && (profile >= sizeof ci_slices / sizeof *ci_slices || ci_slices[profile] != gi_slices(&c, rec)))
        r = NVML_ERROR_NOT_SUPPORTED;
    if (!r) {
        unsigned version = info->version;
        memset(info, 0, sizeof *info);
        info->version = version;
        info->id = profile;
        info->sliceCount = ci_slices[profile];
        info->instanceCount = 1;
        info->multiprocessorCount = info->sliceCount * 14;
        snprintf(info->name, sizeof info->name, "MIG %s", rec->profile);
    }
    state_close(&s);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                  nvmlComputeInstance_t *computeInstance) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = gi_record(gpuInstance, &s, &c, &rec);
    if (!r && (!computeInstance || profileId >= sizeof ci_slices / sizeof *ci_slices
               || ci_slices[profileId] != gi_slices(&c, rec))) r = NVML_ERROR_INVALID_ARGUMENT;
    if (!r && rec->ci >= 0) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
    if (!r) {
        rec->ci = 0;
        new_uuid(rec->uuid, sizeof rec->uuid);
        if (!(r = state_write(&s))) {
            ci_handles[c.index][rec->gi][0] = (struct nvmlComputeInstance_st){c.index, rec->gi, 0};
            *computeInstance = &ci_handles[c.index][rec->gi][0];
        }
    }
    state_close(&s);
    card_free(&c);
    return r;
}

/* The record of a compute instance handle, the state left open. */
static nvmlReturn_t ci_record(nvmlComputeInstance_t ci, struct state *s, struct card *c, struct record **out) {
    if (!ci || ci < &ci_handles[0][0][0] || ci > &ci_handles[MAX_CARDS - 1][MAX_GI - 1][MAX_CI - 1]) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = gi_record(&gi_handles[ci->card][ci->gi], s, c, out);
    if (!r && (*out)->ci != ci->ci) r = NVML_ERROR_INVALID_ARGUMENT;
    return r;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = ci_record(computeInstance, &s, &c, &rec);
    if (!r) {
        rec->ci = -1;
        rec->uuid[0] = '\0';
        r = state_write(&s);
    }
    state_close(&s);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances, unsigned int *count) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = gi_record(gpuInstance, &s, &c, &rec);
    if (!r && (!computeInstances || !count)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (!r) {
        *count = 0;
        if (rec->ci >= 0 && profileId < sizeof ci_slices / sizeof *ci_slices && ci_slices[profileId] == gi_slices(&c, rec)) {
            ci_handles[c.index][rec->gi][rec->ci] = (struct nvmlComputeInstance_st){c.index, rec->gi, rec->ci};
            computeInstances[(*count)++] = &ci_handles[c.index][rec->gi][rec->ci];
        }
    }
    state_close(&s);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = ci_record(computeInstance, &s, &c, &rec);
    if (!r && !info) r = NVML_ERROR_INVALID_ARGUMENT;
    if (!r) {
        nvmlDeviceGetHandleByIndex_v2((unsigned)c.index, &info->device);
        info->gpuInstance = &gi_handles[c.index][rec->gi];
        info->id = (unsigned)rec->ci;
        unsigned slices = gi_slices(&c, rec);
        for (unsigned i = 0; i < sizeof ci_slices / sizeof *ci_slices; i++)
            if (ci_slices[i] == slices) { info->profileId = i; break; }
        info->placement.start = 0;
        info->placement.size = slices;
    }
    state_close(&s);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    if (!count) r = NVML_ERROR_INVALID_ARGUMENT;
    else *count = c.mig ? 7 : 0;
    card_free(&c);
    return r;
}

/* The index-th MIG device (compute instance) of a card, in the state's order. */
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    struct state s;
    if (!migDevice || c.index >= MAX_CARDS) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (mig_on(&c)) r = NVML_ERROR_NOT_SUPPORTED;
    else if (!(r = state_open(&s))) {
        unsigned k = 0;
        r = NVML_ERROR_NOT_FOUND;
        for (int i = 0; i < s.n; i++) {
            struct record *x = &s.r[i];
            if (strcmp(x->gpu, c.uuid) != 0 || x->ci < 0 || x->gi >= MAX_GI || x->ci >= MAX_CI || k++ != index) continue;
            mig_handles[c.index][x->gi][x->ci] = (struct mig_device){c.index, x->gi, x->ci};
            *migDevice = (nvmlDevice_t)(void *)&mig_handles[c.index][x->gi][x->ci];
            r = NVML_SUCCESS;
            break;
        }
    }
    state_close(&s);
    card_free(&c);
    return r;
}

static const struct mig_device *mig_of(nvmlDevice_t device) {
    const struct mig_device *m = (const struct mig_device *)(const void *)device;
    return m >= &mig_handles[0][0][0] && m <= &mig_handles[MAX_CARDS - 1][MAX_GI - 1][MAX_CI - 1] ? m : NULL;
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice) {
    if (!isMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
    *isMigDevice = mig_of(device) != NULL;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id) {
    const struct mig_device *m = mig_of(device);
    if (!m || !id) return NVML_ERROR_INVALID_ARGUMENT;
    *id = (unsigned)m->gi;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id) {
    const struct mig_device *m = mig_of(device);
    if (!m || !id) return NVML_ERROR_INVALID_ARGUMENT;
    *id = (unsigned)m->ci;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device) {
    const struct mig_device *m = mig_of(migDevice);
    if (!m || !device) return NVML_ERROR_INVALID_ARGUMENT;
    return nvmlDeviceGetHandleByIndex_v2((unsigned)m->card, device);
}

int nvml_mig_device_uuid(nvmlDevice_t device, char *uuid, unsigned int length, nvmlReturn_t *r) {
    const struct mig_device *m = mig_of(device);
    if (!m) return 0;
    struct state s;
    struct card c = {0};
    struct record *rec;
    *r = gi_record(&gi_handles[m->card][m->gi], &s, &c, &rec);
    if (!*r && rec->ci != m->ci) *r = NVML_ERROR_INVALID_ARGUMENT; /* destroyed since: the handle is stale */
    if (!*r && (!uuid || strlen(rec->uuid) + 1 > length)) *r = uuid ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_ERROR_INVALID_ARGUMENT;
    if (!*r) strcpy(uuid, rec->uuid);
    state_close(&s);
    card_free(&c);
    return 1;
}
