/* nvml-mig: the stand-in NVML's MIG calls (GPU and compute instances, MIG device handles), with nvml.h's
 * names, signatures, struct layouts and return codes (NVIDIA's header, as vendored by go-nvml).
 *
 * A card's description may carry (native-stubs/README.md has the contract):
 *   "mig": {"mode": "enabled", "profiles": [{"name":"1g.10gb","slices":1,"memory_mib":9856,
 *           "placements":[0,1,2,3,4,5,6]}, ...]}        and  "fail_create": true
 * and the description's top level "state_file": PATH, where the instances that exist are kept as
 *   {"instances":[{"gpu":"GPU-...","profile":"2g.20gb","placement":0,"gi":1,"ci":0,"uuid":"MIG-..."}]}
 * (a GPU instance without a compute instance has no "ci" and no "uuid"). Every call reads the state again
 * under an flock of PATH.lock and writes it by rename, so that instances made by one process are seen by
 * the next and survive its death, as the driver keeps them. A profile's placement size is "placement_size",
 * else its slices (3 slices occupy 4 memory slices, 7 occupy 8, as on an A100). */
#include "nvml-mig-state.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

typedef struct { unsigned int start, size; } nvmlGpuInstancePlacement_t;

/* nvml.h, nvmlGpuInstanceProfileInfo_v2_t (152 bytes). */
typedef struct {
    unsigned int version, id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
        decoderCount, encoderCount, jpegCount, ofaCount;
    unsigned long long memorySizeMB;
    char name[96];
} nvmlGpuInstanceProfileInfo_v2_t;

struct nvmlGpuInstance_st gi_handles[MAX_CARDS][MAX_GI];

/* nvml.h: NVML_GPU_INSTANCE_PROFILE_{1,2,3,4,7,8,6}_SLICE and the compute profiles of the same slices. */
static const unsigned slices_of_profile[] = {1, 2, 3, 4, 7, 8, 6};

void card_free(struct card *c) { json_free(c->desc); c->desc = NULL; }

static struct json *description(void) {
    return json_parse_file(getenv("RSMAP_NVML_STUB"));
}

nvmlReturn_t card_of(nvmlDevice_t device, struct card *c) {
    memset(c, 0, sizeof *c);
    nvmlReturn_t r = nvmlDeviceGetUUID(device, c->uuid, sizeof c->uuid);
    if (r) return r;
    if (strncmp(c->uuid, "MIG-", 4) == 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (!(c->desc = description())) return NVML_ERROR_UNKNOWN;
    const struct json *gpus = json_get(c->desc, "gpus");
    for (size_t i = 0; gpus && i < gpus->n && i < MAX_CARDS; i++) {
        const struct json *u = json_get(gpus->items[i], "uuid");
        if (u && u->kind == JSON_STRING && strcmp(u->string, c->uuid) == 0) {
            c->gpu = gpus->items[i];
            c->index = (int)i;
            c->mig = json_get(c->gpu, "mig");
            return NVML_SUCCESS;
        }
    }
    card_free(c);
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* A card's "create_delay_ms" / "destroy_delay_ms": tests widen the windows a crash may fall into. */
void pause_ms(const struct card *c, const char *key) {
    double ms = num(c->gpu, key, 0);
    if (ms > 0) usleep((useconds_t)(ms * 1000));
}

/* The card's MIG, enabled: else NOT_SUPPORTED, as a driver answers for a card with MIG mode off. */
nvmlReturn_t mig_on(const struct card *c) {
    const struct json *mode = json_get(c->mig, "mode");
    return mode && mode->kind == JSON_STRING && strcmp(mode->string, "enabled") == 0 ? NVML_SUCCESS
                                                                                       : NVML_ERROR_NOT_SUPPORTED;
}

double num(const struct json *o, const char *key, double dflt) {
    const struct json *v = json_get(o, key);
    return v && v->kind == JSON_NUMBER ? v->number : dflt;
}

const char *str(const struct json *o, const char *key) {
    const struct json *v = json_get(o, key);
    return v && v->kind == JSON_STRING ? v->string : NULL;
}

/* The nvml.h profile index of a described profile: its "nvml_profile", else by its slice count. */
static int index_of(const struct json *p) {
    int given = (int)num(p, "nvml_profile", -1);
    if (given >= 0) return given;
    unsigned slices = (unsigned)num(p, "slices", 0);
    for (int i = 0; i < 7; i++) if (slices_of_profile[i] == slices) return i;
    return -1;
}

const struct json *profile_by(const struct card *c, int index, int id, const char *name) {
    const struct json *ps = json_get(c->mig, "profiles");
    for (size_t i = 0; ps && i < ps->n; i++) {
        const struct json *p = ps->items[i];
        if ((index >= 0 && index_of(p) == index) || (id >= 0 && index_of(p) + PROFILE_ID_BASE == id)
            || (name && str(p, "name") && strcmp(str(p, "name"), name) == 0)) return p;
    }
    return NULL;
}

unsigned placement_size(const struct json *p) {
    unsigned slices = (unsigned)num(p, "slices", 1);
    return (unsigned)num(p, "placement_size", slices == 3 ? 4 : slices == 7 ? 8 : slices);
}

/* The state, read under the lock (held until state_close): created empty where there is none yet. */
nvmlReturn_t state_open(struct state *s) {
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
    struct json *d = description();
    const char *path = str(d, "state_file");
    if (!path) { json_free(d); return NVML_SUCCESS; } /* no state file: instances live in no file */
    snprintf(s->path, sizeof s->path, "%s", path);
    json_free(d);
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", s->path);
    if ((s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || flock(s->lock_fd, LOCK_EX) != 0)
        return NVML_ERROR_OPERATING_SYSTEM;
    char *text = json_read_file(s->path), err[160] = "";
    if (!text) return NVML_SUCCESS;
    struct json *j = json_parse(text, err, sizeof err);
    free(text);
    const struct json *list = json_get(j, "instances");
    for (size_t i = 0; list && i < list->n && s->n < MAX_RECORDS; i++) {
        const struct json *o = list->items[i];
        struct record *r = &s->r[s->n++];
        snprintf(r->gpu, sizeof r->gpu, "%s", str(o, "gpu") ? str(o, "gpu") : "");
        snprintf(r->profile, sizeof r->profile, "%s", str(o, "profile") ? str(o, "profile") : "");
        snprintf(r->uuid, sizeof r->uuid, "%s", str(o, "uuid") ? str(o, "uuid") : "");
        r->placement = (int)num(o, "placement", 0);
        r->gi = (int)num(o, "gi", 0);
        r->ci = (int)num(o, "ci", -1);
    }
    if (!j) fprintf(stderr, "nvml-stub: %s: %s\n", s->path, err);
    json_free(j);
    return NVML_SUCCESS;
}

nvmlReturn_t state_write(struct state *s) {
    if (!s->path[0]) return NVML_SUCCESS;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->path);
    FILE *f = fopen(tmp, "w");
    if (!f) return NVML_ERROR_OPERATING_SYSTEM;
    fputs("{\"instances\":[", f);
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->r[i];
        fprintf(f, "%s{\"gpu\":\"%s\",\"profile\":\"%s\",\"placement\":%d,\"gi\":%d", i ? "," : "", r->gpu,
                r->profile, r->placement, r->gi);
        if (r->ci >= 0) fprintf(f, ",\"ci\":%d,\"uuid\":\"%s\"", r->ci, r->uuid);
        fputs("}", f);
    }
    fputs("]}\n", f);
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    return bad || rename(tmp, s->path) != 0 ? NVML_ERROR_OPERATING_SYSTEM : NVML_SUCCESS;
}

void state_close(struct state *s) {
    if (s->lock_fd >= 0) close(s->lock_fd);
    s->lock_fd = -1;
}

struct record *find(struct state *s, const char *gpu, int gi) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->r[i].gpu, gpu) == 0 && s->r[i].gi == gi) return &s->r[i];
    return NULL;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    if (!currentMode || !pendingMode) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (!c.mig) r = NVML_ERROR_NOT_SUPPORTED;
    else *currentMode = *pendingMode = mig_on(&c) == NVML_SUCCESS; /* NVML_DEVICE_MIG_ENABLE 1, DISABLE 0 */
    card_free(&c);
    return r;
}

static void fill_gi_profile(const struct json *p, int index, nvmlGpuInstanceProfileInfo_v2_t *info) {
    unsigned version = info->version;
    memset(info, 0, sizeof *info);
    info->version = version;
    info->id = (unsigned)index + PROFILE_ID_BASE;
    info->sliceCount = (unsigned)num(p, "slices", 1);
    const struct json *pl = json_get(p, "placements");
    info->instanceCount = pl ? (unsigned)pl->n : 0;
    info->multiprocessorCount = info->sliceCount * 14;
    info->memorySizeMB = (unsigned long long)num(p, "memory_mib", 0);
    snprintf(info->name, sizeof info->name, "MIG %s", str(p, "name") ? str(p, "name") : "?");
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    const struct json *p = profile_by(&c, (int)profile, -1, NULL);
    if (!info) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (!c.mig || !p) r = NVML_ERROR_NOT_SUPPORTED;
    else fill_gi_profile(p, (int)profile, info);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t *placements,
                                                           unsigned int *count) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    const struct json *p = profile_by(&c, -1, (int)profileId, NULL);
    const struct json *pl = json_get(p, "placements");
    if (!count) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (!c.mig || !p) r = NVML_ERROR_NOT_SUPPORTED;
    else if (!placements) *count = pl ? (unsigned)pl->n : 0;
    else if (pl && *count < pl->n) r = NVML_ERROR_INSUFFICIENT_SIZE;
    else {
        *count = pl ? (unsigned)pl->n : 0;
        for (unsigned i = 0; i < *count; i++) {
            placements[i].start = (unsigned)pl->items[i]->number;
            placements[i].size = placement_size(p);
        }
    }
    card_free(&c);
    return r;
}

/* A new MIG UUID (the driver's are random too). */
void new_uuid(char *out, unsigned long len) {
    unsigned char b[16] = {0};
    FILE *f = fopen("/dev/urandom", "r");
    if (!f || fread(b, 1, sizeof b, f) != sizeof b) {
        unsigned long t = (unsigned long)time(NULL) ^ (unsigned long)getpid() ^ (unsigned long)clock();
        for (int i = 0; i < 16; i++) b[i] = (unsigned char)(t >> (i % 8 * 8)) ^ (unsigned char)(i * 37);
    }
    if (f) fclose(f);
    snprintf(out, len, "MIG-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t *placement,
                                                      nvmlGpuInstance_t *gpuInstance) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    const struct json *p = profile_by(&c, -1, (int)profileId, NULL);
    const struct json *fail = json_get(c.gpu, "fail_create");
    struct state s;
    if (!placement || !gpuInstance || !p) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (mig_on(&c)) r = NVML_ERROR_NOT_SUPPORTED;
    else if (fail && fail->kind == JSON_BOOL && fail->boolean) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
    if (r) { card_free(&c); return r; }
    const struct json *pl = json_get(p, "placements");
    int possible = 0;
    for (size_t i = 0; pl && i < pl->n; i++) possible |= (unsigned)pl->items[i]->number == placement->start;
    if (!possible || placement->size != placement_size(p)) { card_free(&c); return NVML_ERROR_INVALID_ARGUMENT; }
    pause_ms(&c, "create_delay_ms"); /* a test's window between rsmapd's intent and the creation */
    if ((r = state_open(&s))) { state_close(&s); card_free(&c); return r; }
    unsigned used = 0; /* memory slices occupied on this card, as bits */
    int gi = 1;
    for (int i = 0; i < s.n; i++) {
        if (strcmp(s.r[i].gpu, c.uuid) != 0) continue;
        const struct json *q = profile_by(&c, -1, -1, s.r[i].profile);
        unsigned size = q ? placement_size(q) : 1;
        used |= ((1u << size) - 1) << s.r[i].placement;
    }
    while (gi < MAX_GI && find(&s, c.uuid, gi)) gi++;
    unsigned want = ((1u << placement->size) - 1) << placement->start;
    if ((used & want) || gi >= MAX_GI || c.index >= MAX_CARDS || s.n >= MAX_RECORDS) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
    else {
        struct record *n = &s.r[s.n++];
        memset(n, 0, sizeof *n);
        snprintf(n->gpu, sizeof n->gpu, "%s", c.uuid);
        snprintf(n->profile, sizeof n->profile, "%s", str(p, "name"));
        n->placement = (int)placement->start;
        n->gi = gi;
        n->ci = -1;
        if (!(r = state_write(&s))) {
            gi_handles[c.index][gi] = (struct nvmlGpuInstance_st){c.index, gi};
            *gpuInstance = &gi_handles[c.index][gi];
        }
    }
    state_close(&s);
    card_free(&c);
    return r;
}

/* The state's record of a GPU instance handle, with the state open (the caller closes it). */
nvmlReturn_t gi_record(nvmlGpuInstance_t gi, struct state *s, struct card *c, struct record **out) {
    if (!gi || gi < &gi_handles[0][0] || gi > &gi_handles[MAX_CARDS - 1][MAX_GI - 1]) return NVML_ERROR_INVALID_ARGUMENT;
    long at = gi - &gi_handles[0][0]; /* the handle's place says which it is */
    gi->card = (int)(at / MAX_GI);
    gi->gi = (int)(at % MAX_GI);
    nvmlDevice_t d;
    nvmlReturn_t r = nvmlDeviceGetHandleByIndex_v2((unsigned)gi->card, &d);
    if (r || (r = card_of(d, c))) return r;
    if ((r = state_open(s))) return r;
    *out = find(s, c->uuid, gi->gi);
    return *out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = gi_record(gpuInstance, &s, &c, &rec);
    if (!r) {
        state_close(&s); /* not under the lock while it waits */
        pause_ms(&c, "destroy_delay_ms");
        r = state_open(&s);
        rec = r ? NULL : find(&s, c.uuid, gpuInstance->gi);
        if (!r && !rec) r = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (!r && rec->ci >= 0) r = NVML_ERROR_IN_USE;
    if (!r) {
        *rec = s.r[--s.n];
        r = state_write(&s);
    }
    state_close(&s);
    card_free(&c);
    return r;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,
                                       unsigned int *count) {
    struct card c;
    nvmlReturn_t r = card_of(device, &c);
    if (r) return r;
    const struct json *p = profile_by(&c, -1, (int)profileId, NULL);
    struct state s;
    if (!gpuInstances || !count || !p) r = NVML_ERROR_INVALID_ARGUMENT;
    else if (mig_on(&c)) r = NVML_ERROR_NOT_SUPPORTED;
    else if (!(r = state_open(&s))) {
        unsigned n = 0;
        for (int i = 0; i < s.n && c.index < MAX_CARDS; i++) {
            struct record *x = &s.r[i];
            if (strcmp(x->gpu, c.uuid) != 0 || strcmp(x->profile, str(p, "name")) != 0 || x->gi >= MAX_GI) continue;
            gi_handles[c.index][x->gi] = (struct nvmlGpuInstance_st){c.index, x->gi};
            gpuInstances[n++] = &gi_handles[c.index][x->gi];
        }
        *count = n;
    }
    state_close(&s);
    card_free(&c);
    return r;
}

/* nvml.h, nvmlGpuInstanceInfo_t. */
typedef struct { nvmlDevice_t device; unsigned int id, profileId; nvmlGpuInstancePlacement_t placement; } gi_info_t;

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, gi_info_t *info) {
    struct state s;
    struct card c = {0};
    struct record *rec;
    nvmlReturn_t r = gi_record(gpuInstance, &s, &c, &rec);
    const struct json *p = r ? NULL : profile_by(&c, -1, -1, rec->profile);
    if (!r && !info) r = NVML_ERROR_INVALID_ARGUMENT;
    if (!r) {
        nvmlDeviceGetHandleByIndex_v2((unsigned)c.index, &info->device);
        info->id = (unsigned)rec->gi;
        info->profileId = p ? (unsigned)index_of(p) + PROFILE_ID_BASE : 0;
        info->placement.start = (unsigned)rec->placement;
        info->placement.size = p ? placement_size(p) : 1;
    }
    state_close(&s);
    card_free(&c);
    return r;
}

