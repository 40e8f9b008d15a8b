/* slurm-slots: a job's slots on one node, from the variables of Slurm's prolog environment. */
#include "slurm-slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index of `node` in a Slurm host list ("n[01-03,7],gpu5"), one bracket per name, or -1. */
static int node_index(const char *list, const char *node) {
    int index = 0;
    const char *p = list;
    while (*p) {
        const char *end = p;
        int depth = 0;
        while (*end && (depth > 0 || *end != ',')) {
            if (*end == '[') depth++;
            else if (*end == ']') depth--;
            end++;
        }
        const char *open = memchr(p, '[', (size_t)(end - p));
        if (!open) {
            if ((size_t)(end - p) == strlen(node) && !strncmp(p, node, (size_t)(end - p))) return index;
            index++;
        } else {
            const char *close = memchr(open, ']', (size_t)(end - open));
            if (!close) return -1;
            size_t plen = (size_t)(open - p), slen = (size_t)(end - close - 1);
            for (const char *r = open + 1; r < close;) {
                char *stop;
                long a = strtol(r, &stop, 10), b = a;
                int width = (int)(stop - r);
                if (*stop == '-') b = strtol(stop + 1, &stop, 10);
                if (stop == r || b < a || b - a > 100000) return -1;
                for (long n = a; n <= b; n++, index++) {
                    char name[256];
                    int k = snprintf(name, sizeof name, "%.*s%0*ld%.*s", (int)plen, p, width, n, (int)slen, close + 1);
                    if (k > 0 && (size_t)k < sizeof name && !strcmp(name, node)) return index;
                }
                r = *stop == ',' ? stop + 1 : stop;
                if (r < close && *r != ',' && (*r < '0' || *r > '9')) return -1;
            }
        }
        p = *end ? end + 1 : end;
    }
    return -1;
}

int rsmap_slurm_slots(const char *cpus, const char *list, const char *node) {
    if (!cpus || !*cpus) return 1;
    int want = list && node ? node_index(list, node) : -1;
    int index = 0, first = -1, uniform = 1;
    for (const char *p = cpus; *p;) {
        char *stop;
        long n = strtol(p, &stop, 10), times = 1;
        if (stop == p || n < 1) return 1;
        if (!strncmp(stop, "(x", 2)) {
            times = strtol(stop + 2, &stop, 10);
            if (*stop++ != ')' || times < 1) return 1;
        }
        if (first < 0) first = (int)n;
        uniform &= n == first;
        if (want >= index && want < index + times) return (int)n;
        index += (int)times;
        p = *stop == ',' ? stop + 1 : stop;
        if (*stop && *stop != ',') return 1;
    }
    return uniform && first > 0 ? first : 1;
}

