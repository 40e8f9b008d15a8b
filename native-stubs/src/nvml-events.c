/* nvml-events: the stand-in NVML's events and health (native-stubs/README.md has the contract), with
 * nvml.h's names, signatures and event bits (NVIDIA's header, as vendored by github.com/NVIDIA/go-nvml).
 *
 * The description gains "events_file": PATH. Each JSON line appended to that file after a set was
 * created, such as {"uuid":"GPU-...","type":"xid","xid":79} (types xid, double_bit_ecc, gpu_lost), is
 * delivered once, in order, by nvmlEventSetWait_v2 to a set that registered that card for that event
 * type: xid as nvmlEventTypeXidCriticalError with the Xid in eventData, double_bit_ecc as
 * nvmlEventTypeDoubleBitEccError, gpu_lost as nvmlEventTypeGpuUnavailableError. A card's "health":
 * A line {"type":"wait_error"} makes that nvmlEventSetWait_v2 fail with NVML_ERROR_UNKNOWN, as a driver
 * in trouble may; "event_set_refused": true makes nvmlEventSetCreate answer NVML_ERROR_NOT_SUPPORTED. A card's
 * "health": "ok" | "failed" (default ok) is read from the description again at each call that reports health:
 * failed is a pending row remapping (nvmlDeviceGetRemappedRows) and one volatile uncorrected ECC error
 * (nvmlDeviceGetTotalEccErrors). A card's "health_delay_ms": N makes nvmlDeviceGetRemappedRows take N ms
 * first, as a slow driver's query does (tests of what a daemon serves before its first health look); its
 * "events": false makes nvmlDeviceGetSupportedEventTypes answer none (a card that tells no event).
 * Only the library's public calls are used here to find the cards, so this file knows nothing of
 * nvml-stub.c's inside. */
#include "stub-json.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* nvml.h, nvmlReturn_t: the codes used here. */
enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_TIMEOUT = 10, NVML_ERROR_MEMORY = 20, NVML_ERROR_UNKNOWN = 999
};

/* nvml.h, nvmlEventType. */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001LL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002LL
#define nvmlEventTypeXidCriticalError 0x0000000000000008LL
#define nvmlEventTypeGpuUnavailableError 0x0000000000004000LL
#define SUPPORTED (nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeXidCriticalError \
                   | nvmlEventTypeGpuUnavailableError)

/* nvml.h, nvmlEventData_t, field for field. */
typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

/* nvml.h: NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC. */
#define UNCORRECTED 1
#define VOLATILE 0

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);

#define MAX_REGISTERED 256
#define UUID_LEN 96

struct nvmlEventSet_st {
    pthread_mutex_t lock;
    char path[4096];      /* the events file, "" when the description names none */
    long offset;          /* the file's bytes read so far: events before the set's creation are not its */
    unsigned n;
    struct { nvmlDevice_t device; unsigned long long mask; char uuid[UUID_LEN]; } registered[MAX_REGISTERED];
};

/* The description as it is now (the contract: health is read again at each call that reports it). */
static struct json *description_now(void) {
    return json_parse_file(getenv("RSMAP_NVML_STUB"));
}

static const char *text_of(const struct json *object, const char *key) {
    const struct json *v = json_get(object, key);
    return v && v->kind == JSON_STRING ? v->string : NULL;
}

/* The description's card of that uuid (the last one so named), NULL when none. */
static const struct json *card_of(const struct json *description, const char *uuid) {
    const struct json *gpus = json_get(description, "gpus"), *card = NULL;
    for (size_t i = 0; gpus && gpus->kind == JSON_ARRAY && i < gpus->n; i++) {
        const char *u = text_of(gpus->items[i], "uuid");
        if (u && strcmp(u, uuid) == 0) card = gpus->items[i];
    }
    return card;
}

/* The card's "health" now: 1 failed, 0 ok (also when the description cannot be read or names no such card);
 * its "health_delay_ms", 0 when none, in *delay_ms when not NULL. */
static int failed_now(nvmlDevice_t device, long *delay_ms) {
    char uuid[UUID_LEN];
    if (delay_ms) *delay_ms = 0;
    if (nvmlDeviceGetUUID(device, uuid, sizeof uuid) != NVML_SUCCESS) return 0;
    struct json *d = description_now();
    const struct json *card = card_of(d, uuid);
    const char *h = card ? text_of(card, "health") : NULL;
    int failed = h && strcmp(h, "failed") == 0;
    const struct json *ms = card ? json_get(card, "health_delay_ms") : NULL;
    if (delay_ms && ms && ms->kind == JSON_NUMBER && ms->number > 0 && ms->number < 60000) *delay_ms = (long)ms->number;
    json_free(d);
    return failed;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
    unsigned count;
    if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = nvmlDeviceGetCount_v2(&count);
    if (r) return r;
    for (unsigned i = 0; i < count; i++) {
        nvmlDevice_t d;
        char u[UUID_LEN];
        r = nvmlDeviceGetHandleByIndex_v2(i, &d);
        if (r == NVML_SUCCESS && nvmlDeviceGetUUID(d, u, sizeof u) == NVML_SUCCESS && strcmp(u, uuid) == 0) {
            *device = d;
            return NVML_SUCCESS;
        }
        if (r != NVML_SUCCESS) {
            /* A lost card cannot say its uuid: the description can. */
            struct json *desc = description_now();
            const struct json *gpus = json_get(desc, "gpus");
            int match = gpus && gpus->kind == JSON_ARRAY && i < gpus->n && text_of(gpus->items[i], "uuid")
                        && strcmp(text_of(gpus->items[i], "uuid"), uuid) == 0;
            json_free(desc);
            if (match) return r;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred) {
    char uuid[UUID_LEN];
    nvmlReturn_t r = nvmlDeviceGetUUID(device, uuid, sizeof uuid); /* initialised, ours, not lost */
    if (r) return r;
    if (!corrRows || !uncRows || !isPending || !failureOccurred) return NVML_ERROR_INVALID_ARGUMENT;
    long delay_ms;
    int failed = failed_now(device, &delay_ms);
    struct timespec pause = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    while (delay_ms > 0 && nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
    *corrRows = 0;
    *uncRows = (unsigned)failed;
    *isPending = (unsigned)failed;
    *failureOccurred = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts) {
    char uuid[UUID_LEN];
    nvmlReturn_t r = nvmlDeviceGetUUID(device, uuid, sizeof uuid);
    if (r) return r;
    if (!eccCounts || (errorType != 0 && errorType != UNCORRECTED) || (counterType != VOLATILE && counterType != 1))
        return NVML_ERROR_INVALID_ARGUMENT;
    *eccCounts = errorType == UNCORRECTED && failed_now(device, NULL) ? 1 : 0;
    return NVML_SUCCESS;
}

/* Whether the card's description says "events": false (it supports none of the event types). */
static int without_events(const char *uuid) {
    struct json *d = description_now();
    const struct json *card = card_of(d, uuid);
    const struct json *e = card ? json_get(card, "events") : NULL;
    int off = e && e->kind == JSON_BOOL && !e->boolean;
    json_free(d);
    return off;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes) {
    char uuid[UUID_LEN];
    nvmlReturn_t r = nvmlDeviceGetUUID(device, uuid, sizeof uuid);
    if (r) return r;
    if (!eventTypes) return NVML_ERROR_INVALID_ARGUMENT;
    *eventTypes = without_events(uuid) ? 0 : SUPPORTED;
    return NVML_SUCCESS;
}

static long size_of(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n < 0 ? 0 : n;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    unsigned count;
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = nvmlDeviceGetCount_v2(&count);
    if (r) return r;
    struct json *desc = description_now();
    const struct json *refuse = json_get(desc, "event_set_refused");
    int refused = refuse && refuse->kind == JSON_BOOL && refuse->boolean;
    json_free(desc);
    if (refused) return NVML_ERROR_NOT_SUPPORTED;
    struct nvmlEventSet_st *s = calloc(1, sizeof *s);
    if (!s) return NVML_ERROR_MEMORY;
    pthread_mutex_init(&s->lock, NULL);
    struct json *d = description_now();
    const char *path = text_of(d, "events_file");
    if (path) snprintf(s->path, sizeof s->path, "%s", path);
    json_free(d);
    s->offset = s->path[0] ? size_of(s->path) : 0;
    *set = s;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set) {
    char uuid[UUID_LEN];
    nvmlReturn_t r = nvmlDeviceGetUUID(device, uuid, sizeof uuid);
    if (r) return r;
    if (!set || eventTypes == 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (eventTypes & ~SUPPORTED) return NVML_ERROR_NOT_SUPPORTED; /* as a driver: none of them is registered */
    pthread_mutex_lock(&set->lock);
    unsigned i = 0;
    while (i < set->n && set->registered[i].device != device) i++;
    if (i == set->n) {
        if (set->n == MAX_REGISTERED) { pthread_mutex_unlock(&set->lock); return NVML_ERROR_UNKNOWN; }
        set->n++;
        set->registered[i].device = device;
        set->registered[i].mask = 0;
        snprintf(set->registered[i].uuid, UUID_LEN, "%s", uuid);
    }
    set->registered[i].mask |= eventTypes;
    pthread_mutex_unlock(&set->lock);
    return NVML_SUCCESS;
}

/* One line of the events file as an event for this set: 1 delivered into data, 0 not this set's. */
static int deliver(nvmlEventSet_t set, const char *line, nvmlEventData_t *data) {
    char err[160];
    struct json *e = json_parse(line, err, sizeof err);
    int found = 0;
    const char *uuid = text_of(e, "uuid");
    const char *type = text_of(e, "type");
    if (type && strcmp(type, "wait_error") == 0) { /* the wait itself fails, once, for every set */
        json_free(e);
        return 2;
    }
    if (!uuid || !type) {
        if (line[strspn(line, " \t\r")]) fprintf(stderr, "nvml-stub: %s: not an event: %s\n", set->path, line);
        json_free(e);
        return 0;
    }
    unsigned long long bit = strcmp(type, "xid") == 0 ? nvmlEventTypeXidCriticalError
                             : strcmp(type, "double_bit_ecc") == 0 ? nvmlEventTypeDoubleBitEccError
                             : strcmp(type, "gpu_lost") == 0 ? nvmlEventTypeGpuUnavailableError : 0;
    for (unsigned i = 0; bit && i < set->n && !found; i++) {
        if (strcmp(set->registered[i].uuid, uuid) == 0 && (set->registered[i].mask & bit)) {
            const struct json *xid = json_get(e, "xid");
            data->device = set->registered[i].device;
            data->eventType = bit;
            data->eventData = bit == nvmlEventTypeXidCriticalError
                              ? (xid && xid->kind == JSON_NUMBER ? (unsigned long long)xid->number : 999) : 0;
            data->gpuInstanceId = 0xFFFFFFFFu;
            data->computeInstanceId = 0xFFFFFFFFu;
            found = 1;
        }
    }
    json_free(e);
    return found;
}

/* The next whole line after the set's offset that is its event; 1 when one was delivered, 2 for a wait_error. */
static int next_event(nvmlEventSet_t set, nvmlEventData_t *data) {
    if (!set->path[0]) return 0;
    FILE *f = fopen(set->path, "r");
    if (!f) return 0;
    int got = 0;
    if (fseek(f, set->offset, SEEK_SET) == 0) {
        char line[8192];
        while (!got && fgets(line, sizeof line, f)) {
            size_t len = strlen(line);
            if (len == 0 || line[len - 1] != '\n') break; /* a line still being appended: next time */
            set->offset += (long)len;
            line[len - 1] = '\0';
            got = deliver(set, line, data);
        }
    }
    fclose(f);
    return got;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    if (!set || !data) return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec start, now, pause = {0, 2 * 1000 * 1000}; /* the file is polled every 2 ms */
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pthread_mutex_lock(&set->lock);
        int got = next_event(set, data);
        pthread_mutex_unlock(&set->lock);
        if (got == 2) return NVML_ERROR_UNKNOWN;
        if (got) return NVML_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        if (waited >= (long)timeoutms) return NVML_ERROR_TIMEOUT;
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
        }
        pause.tv_nsec = 2 * 1000 * 1000;
    }
}

nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    return nvmlEventSetWait_v2(set, data, timeoutms);
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_destroy(&set->lock);
    free(set);
    return NVML_SUCCESS;
}
