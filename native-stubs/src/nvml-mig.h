/* nvml-mig.h: what the stand-in's card calls (nvml-stub.c) ask of its MIG part (nvml-mig.c). */
#ifndef NVML_MIG_H
#define NVML_MIG_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

#pragma GCC visibility push(hidden)
/* A MIG device's handle (nvmlDeviceGetMigDeviceHandleByIndex): 1 with its UUID's call answered in *r;
 * any other handle: 0. */
int nvml_mig_device_uuid(nvmlDevice_t device, char *uuid, unsigned int length, nvmlReturn_t *r);
#pragma GCC visibility pop

#endif
