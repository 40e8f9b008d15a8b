/* spank_rsmap: resource maps for Slurm jobs. Adds --rsmap=REQUEST to sbatch, salloc and srun (its form
 * checked before the job is queued) and --rsmap-filter=EXPR (the hosts the job accepts, issue 15: checked
 * at submission by job_submit.lua, and again by rsmapd at job start), asks rsmapd for the grant in the job's prolog, puts every task
 * under the grant's device policy with exactly its SGE_HGR_<name> variables, and gives the grant back in
 * the epilog. docs/integration-slurm.md says why a SPANK plugin and how to configure it.
 *
 * This file: the options and the submitting side; spank_rsmap_node.c: the job's prolog, tasks and epilog.
 *
 * plugstack.conf:  required /usr/lib/rsmap/spank_rsmap.so [socket=PATH] [spool=DIR] [timeout=S]
 *   socket  rsmapd's socket (default /run/rsmap/rsmapd.sock)
 *   timeout how long each call to rsmapd may take, connect and answer together, in seconds (default 30):
 *           a stopped or stuck rsmapd costs the prolog, a task or the epilog at most this long
 *   spool   where the plugin marks the jobs it asked grants for, DIR/active_jobs/<job>.1; set rsmapd's
 *           execd_spool to DIR so that a job whose epilog ran while rsmapd was away is released when it
 *           is back (default /run/rsmap/slurm) */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "rsmap-client.h"
#include "rsmap-request.h"
#include "spank_rsmap.h"

SPANK_PLUGIN(rsmap, 1);


char spank_socket[1024] = "";
char spank_spool[1024] = "/run/rsmap/slurm";
int spank_timeout_s = 30;
static char request[REQUEST_MAX] = ""; /* --rsmap as given, in this process */
static char allocation[REQUEST_MAX] = ""; /* srun inside an allocation: the allocation's --rsmap */
static char other[REQUEST_MAX] = "";      /* srun inside an allocation: a --rsmap unlike the allocation's */
static char filter[FILTER_MAX + 1] = "";  /* --rsmap-filter as given, in this process */

/* Alternatives (issue 15): 'gpu=4 || gpu=2' - requests in the user's order, the node grants the first
 * that can be granted now (JOB_START "alternatives"). Each part of req, trimmed, into part; the next one
 * after *at, or NULL when none is left. */
const char *spank_next_alternative(const char *at, char *part, size_t cap) {
    if (!at) return NULL;
    const char *bar = strstr(at, "||");
    size_t n = bar ? (size_t)(bar - at) : strlen(at);
    while (n && (*at == ' ' || *at == '\t')) at++, n--;
    while (n && (at[n - 1] == ' ' || at[n - 1] == '\t')) n--;
    snprintf(part, cap, "%.*s", (int)(n < cap ? n : cap - 1), at);
    return bar ? bar + 2 : at + strlen(at);
}

/* Each alternative's form, as one request's; why names the alternative (0-based, as rsmapd does). */
static int check_alternatives(const char *req, char *why, size_t cap) {
    static char part[REQUEST_MAX];
    char inner[WHY - 64]; /* room for "alternative N: " in why */
    int i = 0;
    for (const char *at = req; *at || i == 0; i++) {
        at = spank_next_alternative(at, part, sizeof part);
        if (!part[0]) {
            snprintf(why, cap, "alternative %d is empty (write 'gpu=4 || gpu=2')", i);
            return -1;
        }
        if (rsmap_request_check(part, inner, sizeof inner) != 0) {
            snprintf(why, cap, "alternative %d: %.*s", i, (int)(sizeof inner - 1), inner);
            return -1;
        }
        if (!*at) break;
    }
    return 0;
}

/* The form is checked where the user types it (srun, sbatch, salloc): a request that cannot be one is
 * refused before the job is queued, with rsmap's own words. rsmapd checks the rest at job start. */
static int on_rsmap(int val, const char *optarg, int remote) {
    (void)val;
    char why[WHY];
    if (!optarg || !*optarg) {
        slurm_error("--rsmap: empty request (e.g. --rsmap='gpu=1[same=id]')");
        return -1;
    }
    if (strlen(optarg) >= sizeof request) {
        slurm_error("--rsmap: request longer than %zu characters", sizeof request - 1);
        return -1;
    }
    if (!remote && (strstr(optarg, "||") ? check_alternatives(optarg, why, sizeof why)
                                         : rsmap_request_check(optarg, why, sizeof why)) != 0) {
        slurm_error("--rsmap: %s", why);
        return -1;
    }
    snprintf(request, sizeof request, "%s", optarg);
    if (!remote && strcmp(allocation, optarg) != 0) snprintf(other, sizeof other, "%s", optarg);
    return 0;
}

static struct spank_option rsmap_option = {
    "rsmap", "REQUEST",
    "resource-map request, e.g. 'gpu=2[same=id]' (rsmap request language); the job's tasks see "
    "SGE_HGR_<name> and reach only the granted devices",
    1, 0, on_rsmap
};

/* Only the form of a filter is checked here (its length, printable characters): the filter language is
 * parsed by rsmap alone (docs/filters.md), at submission by job_submit.lua and at job start by rsmapd, so
 * that one parser gives one set of words and columns. A control character could never parse. */
static int on_filter(int val, const char *optarg, int remote) {
    (void)val;
    (void)remote;
    if (!optarg || !optarg[strspn(optarg, " \t")]) {
        slurm_error("--rsmap-filter: empty filter (e.g. --rsmap-filter='cpu_speed > 2GHz')");
        return -1;
    }
    size_t n = strlen(optarg);
    if (n > FILTER_MAX) {
        slurm_error("--rsmap-filter: filter longer than %d characters", FILTER_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)optarg[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            slurm_error("--rsmap-filter: column %zu: control character U+%04X", i + 1, c);
            return -1;
        }
    }
    snprintf(filter, sizeof filter, "%s", optarg);
    return 0;
}

static struct spank_option filter_option = {
    "rsmap-filter", "EXPR",
    "hosts the job accepts, e.g. 'cpu_speed > 2GHz && kernel >= 6.5' (rsmap filter language); refused at "
    "submission when no host passes",
    1, 0, on_filter
};

/* The plugstack.conf arguments, given to every callback (Slurm calls no init before a job script's). */
int spank_configure(int ac, char **av) {
    for (int i = 0; i < ac; i++) {
        char *end;
        long t;
        if (!strncmp(av[i], "socket=", 7)) snprintf(spank_socket, sizeof spank_socket, "%s", av[i] + 7);
        else if (!strncmp(av[i], "spool=", 6)) snprintf(spank_spool, sizeof spank_spool, "%s", av[i] + 6);
        else if (!strncmp(av[i], "timeout=", 8) && (t = strtol(av[i] + 8, &end, 10)) >= 1 && t <= 3600 && !*end
                 && av[i][8]) spank_timeout_s = (int)t;
        else {
            slurm_error("rsmap: unknown plugstack.conf argument '%s' (socket=PATH, spool=DIR, timeout=1..3600)", av[i]);
            return -1;
        }
    }
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
    if (spank_configure(ac, av) < 0) return -1;
    /* Inside an allocation Slurm exports its job control environment as SLURM_SPANK_* (ours:
     * SLURM_SPANK_RSMAP_REQUEST) and hands its options on to srun (SLURM_SPANK__SLURM_SPANK_OPTION_...,
     * which calls on_rsmap like a command-line option): both say what the allocation asked for. They are
     * the user's to change, and only decide what srun says: a step never makes a grant of its own. */
    const char *inherited = getenv("SLURM_SPANK_RSMAP_REQUEST");
    if (!inherited) inherited = getenv("SLURM_SPANK__SLURM_SPANK_OPTION_rsmap_rsmap");
    if (spank_context() == S_CTX_LOCAL && inherited) snprintf(allocation, sizeof allocation, "%s", inherited);
    /* Registered in every context: options travel from srun/sbatch to the prolog and the tasks. */
    struct spank_option *options[] = { &rsmap_option, &filter_option };
    for (int i = 0; i < 2; i++) {
        spank_err_t e = spank_option_register(sp, options[i]);
        if (e != ESPANK_SUCCESS && e != ESPANK_NOT_AVAIL && spank_context() != S_CTX_SLURMD
            && spank_context() != S_CTX_JOB_SCRIPT) {
            slurm_error("rsmap: cannot register --%s: %s", options[i]->name, spank_strerror(e));
            return -1;
        }
    }
    return 0;
}

/* After the options: the request rides to the prolog in the job control environment (SPANK_RSMAP_REQUEST),
 * which only the submitting command sets; a job's own environment cannot forge it. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
    (void)ac;
    (void)av;
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
    const char *job = getenv("SLURM_JOB_ID");
    /* The filter chose the job's nodes at submission; a step inside an allocation runs on those nodes,
     * so there the filter (handed on like any option) has nothing left to choose. */
    if (filter[0] && !(ctx == S_CTX_LOCAL && job && *job)) {
        spank_err_t e = spank_job_control_setenv(sp, "RSMAP_FILTER", filter, 1);
        if (e != ESPANK_SUCCESS) {
            slurm_error("--rsmap-filter: cannot pass the filter on: %s", spank_strerror(e));
            return -1;
        }
    }
    if (!request[0]) return 0;
    if (ctx == S_CTX_LOCAL && job && *job) {
        /* srun inside an allocation: Slurm hands the allocation's options on to its steps through this
         * variable, and they are the job's own. Another request would be a second grant and a second
         * device policy for processes already under the job's: say so rather than ignore it. */
        if (allocation[0] && !other[0]) return 0;
        if (allocation[0]) {
            slurm_error("--rsmap: job %s already has its resource maps (%s); its steps share them", job, allocation);
        } else {
            slurm_error("--rsmap: job %s has no resource maps; ask for them with sbatch or salloc --rsmap", job);
        }
        return -1;
    }
    spank_err_t e = spank_job_control_setenv(sp, "RSMAP_REQUEST", request, 1);
    if (e != ESPANK_SUCCESS) {
        slurm_error("--rsmap: cannot pass the request on: %s", spank_strerror(e));
        return -1;
    }
    return 0;
}

