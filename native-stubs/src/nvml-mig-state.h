/* nvml-mig-state.h: the stand-in's MIG internals shared by nvml-mig.c (GPU instances) and nvml-mig-ci.c
 * (compute instances, MIG device handles): the card behind a handle, the state file, the handles. */
#ifndef NVML_MIG_STATE_H
#define NVML_MIG_STATE_H

#include "nvml-mig.h"
#include "stub-json.h"

/* nvml.h, nvmlReturn_t: the codes the MIG calls answer. */
enum {
    NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_OPERATING_SYSTEM = 17, NVML_ERROR_IN_USE = 19,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23, NVML_ERROR_UNKNOWN = 999
};

/* The card calls of nvml-stub.c the MIG part uses. */
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);

#pragma GCC visibility push(hidden)

#define MAX_CARDS 64
#define MAX_GI 16
#define MAX_CI 8
#define MAX_RECORDS 512
/* A profile's id is not its index in nvml.h (an A100's 1g.10gb is id 19), so callers must not mix them. */
#define PROFILE_ID_BASE 20

/* One handle per (card, gi) and (card, gi, ci): stable addresses, checked against the state at each use. */
struct nvmlGpuInstance_st { int card, gi; };
struct nvmlComputeInstance_st { int card, gi, ci; };
struct mig_device { int card, gi, ci; };
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
extern struct nvmlGpuInstance_st gi_handles[MAX_CARDS][MAX_GI];

/* One GPU instance of the state file; ci -1: no compute instance (then no uuid). */
struct record { char gpu[96], profile[64], uuid[96]; int placement, gi, ci; };
struct state { struct record r[MAX_RECORDS]; int n; int lock_fd; char path[4096]; };
/* The description read again (a test may change it between calls) and the card behind a handle. */
struct card { struct json *desc; const struct json *gpu, *mig; int index; char uuid[96]; };

nvmlReturn_t card_of(nvmlDevice_t device, struct card *c);
void card_free(struct card *c);
nvmlReturn_t mig_on(const struct card *c);
double num(const struct json *o, const char *key, double dflt);
const char *str(const struct json *o, const char *key);
const struct json *profile_by(const struct card *c, int index, int id, const char *name);
unsigned placement_size(const struct json *p);
/* The state under an exclusive flock of PATH.lock, held until state_close; written by rename. */
nvmlReturn_t state_open(struct state *s);
nvmlReturn_t state_write(struct state *s);
void state_close(struct state *s);
struct record *find(struct state *s, const char *gpu, int gi);
/* The record of a GPU instance handle, the state left open (the caller closes it and frees c). */
nvmlReturn_t gi_record(nvmlGpuInstance_t gi, struct state *s, struct card *c, struct record **out);
void new_uuid(char *out, unsigned long len);
void pause_ms(const struct card *c, const char *key);

#pragma GCC visibility pop

#endif
