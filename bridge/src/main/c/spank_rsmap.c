/* spank_rsmap: resource maps for Slurm jobs. Adds --rsmap=REQUEST to sbatch, salloc and srun (its form
 * checked before the job is queued) and --rsmap-filter=EXPR (the hosts the job accepts, issue 15: checked
 * at submission by job_submit.lua, and again by rsmapd at job start), asks rsmapd for the grant in the job's prolog, puts every task
 * under the grant's device policy with exactly its SGE_HGR_<name> variables, and gives the grant back in
 * the epilog. docs/integration-slurm.md says why a SPANK plugin and how to configure it.
 *
 * plugstack.conf:  required /usr/lib/rsmap/spank_rsmap.so [socket=PATH] [spool=DIR]
 *   socket  rsmapd's socket (default /run/rsmap/rsmapd.sock)
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
#include "slurm-slots.h"

SPANK_PLUGIN(rsmap, 1);

enum { WHY = 4096, REQUEST_MAX = 65536, FILTER_MAX = 65536 /* rsmap.Limits.maxFilterChars */ };

static char socket_path[1024] = "";
static char spool[1024] = "/run/rsmap/slurm";
static char request[REQUEST_MAX] = ""; /* --rsmap as given, in this process */
static char allocation[REQUEST_MAX] = ""; /* srun inside an allocation: the allocation's --rsmap */
static char other[REQUEST_MAX] = "";      /* srun inside an allocation: a --rsmap unlike the allocation's */
static char filter[FILTER_MAX + 1] = "";  /* --rsmap-filter as given, in this process */

/* Alternatives (issue 15): 'gpu=4 || gpu=2' - requests in the user's order, the node grants the first
 * that can be granted now (JOB_START "alternatives"). Each part of req, trimmed, into part; the next one
 * after *at, or NULL when none is left. */
static const char *next_alternative(const char *at, char *part, size_t cap) {
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
        at = next_alternative(at, part, sizeof part);
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

/* The JSON list of the alternatives of req ("[\"gpu=4\",\"gpu=2\"]"); -1 when it does not fit. */
static int alternatives_json(const char *req, char *out, size_t cap) {
    static char part[REQUEST_MAX];
    char *escaped = malloc(6 * strlen(req) + 8);
    size_t n = 0;
    int r = escaped ? 0 : -1;
    if (r == 0 && cap > 1) out[n++] = '[';
    for (const char *at = req; r == 0 && *at;) {
        at = next_alternative(at, part, sizeof part);
        if (rsmap_json_string(escaped, 6 * strlen(req) + 8, part) != 0) r = -1;
        else {
            int w = snprintf(out + n, cap - n, "%s\"%s\"", n > 1 ? "," : "", escaped);
            if (w < 0 || (size_t)w >= cap - n) r = -1;
            else n += (size_t)w;
        }
    }
    if (r == 0 && n + 2 <= cap) {
        out[n++] = ']';
        out[n] = 0;
    } else r = -1;
    free(escaped);
    return r;
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
static int configure(int ac, char **av) {
    for (int i = 0; i < ac; i++) {
        if (!strncmp(av[i], "socket=", 7)) snprintf(socket_path, sizeof socket_path, "%s", av[i] + 7);
        else if (!strncmp(av[i], "spool=", 6)) snprintf(spool, sizeof spool, "%s", av[i] + 6);
        else {
            slurm_error("rsmap: unknown plugstack.conf argument '%s' (socket=PATH, spool=DIR)", av[i]);
            return -1;
        }
    }
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
    if (configure(ac, av) < 0) return -1;
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

/* --- on the node --- */

static int job_id(spank_t sp, char *out, size_t cap) {
    uint32_t id = 0;
    if (spank_get_item(sp, S_JOB_ID, &id) == ESPANK_SUCCESS && id > 0) {
        snprintf(out, cap, "%u", id);
        return 0;
    }
    const char *e = getenv("SLURM_JOB_ID");
    if (e && *e && strspn(e, "0123456789") == strlen(e) && strlen(e) < cap) {
        snprintf(out, cap, "%s", e);
        return 0;
    }
    return -1;
}

/* DIR/active_jobs/<job>.1: rsmapd's reconciliation reads a job's directory there (docs/protocol.md). */
static void job_dir(const char *job, char *out, size_t cap) {
    snprintf(out, cap, "%s/active_jobs/%s.1", spool, job);
}

static int mkdirs(const char *path, mode_t mode) {
    char p[1300];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* Why the job has no grant, for its tasks to say (the prolog cannot fail a job without draining the node). */
static void note_refusal(const char *dir, const char *why) {
    char path[1200];
    snprintf(path, sizeof path, "%s/refused", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); /* read back as root */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (f) {
        fprintf(f, "%s\n", why);
        fclose(f);
    } else if (fd >= 0) {
        close(fd);
    }
}

/* JOB_START as root, from the job's prolog (PrologFlags=Contain or Alloc: once per node at allocation).
 * A refusal fails the job at its first task with the reason, never the node: a non-zero prolog would
 * drain it for what is the job's request, or a busy resource map. */
int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
    if (configure(ac, av) < 0) return 0;
    const char *req = getenv("SPANK_RSMAP_REQUEST");
    if (!req || !*req) return 0;
    char job[32], dir[1200], why[WHY] = "", user[256] = "";
    if (job_id(sp, job, sizeof job) < 0) {
        slurm_error("rsmap: prolog without a job id");
        return 0;
    }
    const char *u = getenv("SLURM_JOB_USER");
    if (u && *u) snprintf(user, sizeof user, "%s", u);
    else {
        uint32_t uid;
        struct passwd *pw;
        if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS && (pw = getpwuid(uid)))
            snprintf(user, sizeof user, "%s", pw->pw_name);
    }
    job_dir(job, dir, sizeof dir);
    /* The mark first: from here on a reconciliation never mistakes the job for a gone one. */
    if (mkdirs(dir, 0700) < 0) {
        slurm_error("rsmap: job %s: cannot create %s: %s", job, dir, strerror(errno));
        return 0;
    }
    int fd = rsmap_connect(socket_path, why, sizeof why); /* also refuses a server that is not rsmapd's user */
    if (fd < 0) {
        note_refusal(dir, why);
        slurm_error("rsmap: job %s: %s", job, why);
        return 0;
    }
    /* The job's filter goes along: rsmapd refuses a job whose filter this host fails (issue 15), the
     * check that stands when job_submit.lua could not reach the authority at submission. */
    const char *flt = getenv("SPANK_RSMAP_FILTER");
    if (!flt) flt = "";
    size_t cap = 6 * strlen(req) + 6 * strlen(flt) + 1024;
    char ej[64], eu[600], *er = malloc(6 * strlen(req) + 8), *ef = malloc(6 * strlen(flt) + 8), *arg = malloc(cap);
    int r = -1;
    if (er && ef && arg && rsmap_json_string(ej, sizeof ej, job) == 0 && rsmap_json_string(eu, sizeof eu, user) == 0
        && rsmap_json_string(er, 6 * strlen(req) + 8, req) == 0 && rsmap_json_string(ef, 6 * strlen(flt) + 8, flt) == 0) {
        int slots = rsmap_slurm_slots(getenv("SLURM_JOB_CPUS_PER_NODE"), getenv("SLURM_JOB_NODELIST"),
                                      getenv("SLURMD_NODENAME"));
        int n;
        if (strstr(req, "||")) { /* the node grants the first alternative that can be granted now */
            n = snprintf(arg, cap, "{\"job\":\"%s\",\"task\":\"undefined\",\"user\":\"%s\",\"slots\":%d,"
                         "\"alternatives\":", ej, eu, slots);
            if (alternatives_json(req, arg + n, cap - n) != 0) n = -1;
            else n += (int)strlen(arg + n);
        } else {
            n = snprintf(arg, cap, "{\"job\":\"%s\",\"task\":\"undefined\",\"user\":\"%s\",\"slots\":%d,"
                         "\"request\":\"%s\"", ej, eu, slots, er);
        }
        if (n < 0) {
            snprintf(arg, cap, "{\"job\":\"%s\",\"request\":\"\"}", ej); /* refused by rsmapd, said in the log */
            n = (int)strlen(arg) - 1;
        }
        if (*flt) snprintf(arg + n, cap - n, ",\"filter\":\"%s\"}", ef);
        else snprintf(arg + n, cap - n, "}");
        const char *a[] = { arg };
        r = rsmap_init(fd, why, sizeof why);
        if (r == RSMAP_OK) r = rsmap_call(fd, 2, RSMAP_JOB_START, 1, a, NULL, NULL, why, sizeof why);
    }
    free(er);
    free(ef);
    free(arg);
    close(fd);
    if (r == RSMAP_OK) return 0;
    if (r < 0 && !why[0]) snprintf(why, sizeof why, "lost rsmapd during JOB_START");
    note_refusal(dir, why);
    slurm_error("rsmap: job %s: %s", job, why);
    return 0;
}

/* Removes every SGE_HGR_* the task brought along: the grant alone sets them (seed 002). */
static void drop_brought(spank_t sp) {
    char **env = NULL;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) return;
    char names[64][256];
    int n = 0;
    for (char **e = env; *e && n < 64; e++) {
        const char *eq = strchr(*e, '=');
        if (!strncmp(*e, "SGE_HGR_", 8) && eq && (size_t)(eq - *e) < sizeof names[0])
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(eq - *e), *e);
    }
    for (int i = 0; i < n; i++) spank_unsetenv(sp, names[i]); /* after the walk: unsetenv moves the array */
    if (n == 64) drop_brought(sp);
}

/* The answer's SGE_HGR_* and, where gpu_map is built from NVML, the variable naming the job's cards (one
 * of those gpu_env may name, docs/gpus.md), set over the task's own value; nothing else. */
static int set_granted(void *ctx, const char *name_value) {
    static const char *const gpu[] = {"CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL="};
    const char *eq = strchr(name_value, '=');
    int gpu_variable = 0;
    for (size_t i = 0; i < sizeof gpu / sizeof *gpu; i++)
        if (!strncmp(name_value, gpu[i], strlen(gpu[i]))) gpu_variable = 1;
    if (!eq || (strncmp(name_value, "SGE_HGR_", 8) != 0 && !gpu_variable)) return 0; /* ours only */
    char name[256];
    if ((size_t)(eq - name_value) >= sizeof name) return -1;
    snprintf(name, sizeof name, "%.*s", (int)(eq - name_value), name_value);
    return spank_setenv((spank_t)ctx, name, eq + 1, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* In each task, after fork and before the job's user is taken on: JOB_ENTER from the task's own process
 * (rsmapd reads its pid from the socket) puts it under the grant's device policy, and the answer gives
 * its SGE_HGR_* variables. A job with a grant never runs a task outside its policy. */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av) {
    if (configure(ac, av) < 0) return -1;
    drop_brought(sp);
    char job[32], dir[1200], refused[1300], why[WHY] = "";
    if (job_id(sp, job, sizeof job) < 0) return 0;
    job_dir(job, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) < 0) return 0; /* the job asked for no resource map */
    snprintf(refused, sizeof refused, "%s/refused", dir);
    FILE *f = fopen(refused, "r");
    if (f) {
        if (!fgets(why, sizeof why, f)) snprintf(why, sizeof why, "refused at job start");
        fclose(f);
        why[strcspn(why, "\n")] = '\0';
        slurm_error("rsmap: job %s has no resource maps: %s", job, why);
        return -1;
    }
    int fd = rsmap_connect(socket_path, why, sizeof why);
    if (fd < 0) {
        slurm_error("rsmap: job %s: %s; the task does not run outside its device policy", job, why);
        return -1;
    }
    char arg[128];
    snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"undefined\"}", job);
    const char *a[] = { arg };
    int r = rsmap_init(fd, why, sizeof why);
    if (r == RSMAP_OK) r = rsmap_call(fd, 2, RSMAP_JOB_ENTER, 1, a, set_granted, sp, why, sizeof why);
    close(fd);
    /* rsmap-shell inside the job (issue 13) finds the socket the plugin was configured with; rsmap-shell
     * still believes only a server of root's or daemon_user's, so a value the job sets itself is harmless. */
    if (r == RSMAP_OK && socket_path[0] && spank_setenv(sp, "RSMAP_SOCKET", socket_path, 1) != ESPANK_SUCCESS)
        slurm_info("rsmap: job %s: RSMAP_SOCKET not set in the task's environment", job);
    if (r == RSMAP_OK) return 0;
    slurm_error("rsmap: job %s: %s", job, r < 0 && !why[0] ? "lost rsmapd during JOB_ENTER" : why);
    return -1;
}

/* JOB_END as root from the epilog (also after scancel); the mark goes after it, so that rsmapd, if it
 * was away, releases the job at its next reconciliation. Never fails the node. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    if (configure(ac, av) < 0) return 0;
    char job[32], dir[1200], refused[1300], why[WHY] = "";
    if (job_id(sp, job, sizeof job) < 0) return 0;
    job_dir(job, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) < 0) return 0;
    int fd = rsmap_connect(socket_path, why, sizeof why), r = -1;
    if (fd >= 0) {
        char arg[128];
        snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"undefined\"}", job);
        const char *a[] = { arg };
        r = rsmap_init(fd, why, sizeof why);
        if (r == RSMAP_OK) r = rsmap_call(fd, 2, RSMAP_JOB_END, 1, a, NULL, NULL, why, sizeof why);
        close(fd);
    }
    if (r < 0) slurm_error("rsmap: job %s: %s; rsmapd releases the job when back", job, why[0] ? why : "lost rsmapd during JOB_END");
    else if (r == RSMAP_ERROR) slurm_info("rsmap: job %s: %s", job, why); /* nothing held (refused): gone anyway */
    snprintf(refused, sizeof refused, "%s/refused", dir);
    unlink(refused);
    if (rmdir(dir) < 0 && errno != ENOENT) slurm_error("rsmap: job %s: cannot remove %s: %s", job, dir, strerror(errno));
    return 0;
}
