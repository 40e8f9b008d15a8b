/* spank_rsmap_node: the plugin on the node - JOB_START in the job's prolog, JOB_ENTER in each task before it
 * runs as the job's user, JOB_END in the epilog - each one rsmap_exchange bounded by plugstack.conf's
 * timeout= (default 30 s), so that a stopped or stuck rsmapd never holds slurmd's prolog, a task's start or
 * the epilog longer (docs/integration-slurm.md). */
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
#include "slurm-slots.h"
#include "spank_rsmap.h"

/* One command to rsmapd within the configured timeout; JOB_START and JOB_END are idempotent there and tried
 * again after a lost connection, JOB_ENTER (this task's own pid) is not. */
static void call(unsigned code, const char *arg, rsmap_event_fn on_event, void *ctx, struct rsmap_outcome *out) {
    struct rsmap_request r = { .socket = spank_socket[0] ? spank_socket : NULL, .code = code, .arg = arg,
                               .timeout_ms = spank_timeout_s * 1000, .idempotent = code != RSMAP_JOB_ENTER,
                               .on_event = on_event, .ctx = ctx };
    rsmap_exchange(&r, out);
}

/* {"job":J,"task":"undefined"}: Slurm's job, as rsmapd names it. NULL: out of memory. */
static char *job_task(const char *job) {
    struct rsmap_json j;
    rsmap_json_begin(&j);
    rsmap_json_str(&j, "job", job);
    rsmap_json_str(&j, "task", "undefined");
    return rsmap_json_end(&j);
}

/* The JSON list of the alternatives of req ("[\"gpu=4\",\"gpu=2\"]"); -1 when it does not fit. */
static int alternatives_json(const char *req, char *out, size_t cap) {
    static char part[REQUEST_MAX];
    char *escaped = malloc(6 * strlen(req) + 8);
    size_t n = 0;
    int r = escaped ? 0 : -1;
    if (r == 0 && cap > 1) out[n++] = '[';
    for (const char *at = req; r == 0 && *at;) {
        at = spank_next_alternative(at, part, sizeof part);
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
    snprintf(out, cap, "%s/active_jobs/%s.1", spank_spool, job);
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
    char path[1300];
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
    if (spank_configure(ac, av) < 0) return 0;
    const char *req = getenv("SPANK_RSMAP_REQUEST");
    if (!req || !*req) return 0;
    char job[32], dir[1200], user[256] = "";
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
    /* The job's filter goes along: rsmapd refuses a job whose filter this host fails, the check that
     * stands when job_submit.lua could not reach the authority at submission. */
    const char *flt = getenv("SPANK_RSMAP_FILTER");
    int slots = rsmap_slurm_slots(getenv("SLURM_JOB_CPUS_PER_NODE"), getenv("SLURM_JOB_NODELIST"),
                                  getenv("SLURMD_NODENAME"));
    struct rsmap_json j;
    rsmap_json_begin(&j);
    rsmap_json_str(&j, "job", job);
    rsmap_json_str(&j, "task", "undefined");
    rsmap_json_str(&j, "user", user);
    rsmap_json_int(&j, "slots", slots);
    char *list = NULL;
    if (strstr(req, "||")) { /* the node grants the first alternative that can be granted now */
        size_t cap = 6 * strlen(req) + 64;
        list = malloc(cap);
        if (!list || alternatives_json(req, list, cap) != 0) j.failed = 1;
        else rsmap_json_raw(&j, "alternatives", list);
    } else {
        rsmap_json_str(&j, "request", req);
    }
    if (flt && *flt) rsmap_json_str(&j, "filter", flt);
    char *arg = rsmap_json_end(&j);
    free(list);
    struct rsmap_outcome o = { .status = RSMAP_LOST };
    if (arg) call(RSMAP_JOB_START, arg, NULL, NULL, &o);
    else snprintf(o.why, sizeof o.why, "out of memory for JOB_START");
    free(arg);
    if (o.status == RSMAP_OK) return 0;
    /* Whatever the category: the job fails at its first task with the reason, never the node. */
    note_refusal(dir, o.why);
    slurm_error("rsmap: job %s: %s", job, o.why);
    return 0;
}

/* Removes every SGE_HGR_* the task brought along: the grant alone sets them (Grid Engine's RSMAP manual); so
 * is RSMAP_CDI_DEVICE, the job's CDI device (docs/containers.md). */
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
    spank_unsetenv(sp, "RSMAP_CDI_DEVICE");
    if (n == 64) drop_brought(sp);
}

/* One SGE_HGR_<name>=value of the answer into the task's environment, or, where gpu_map is built from NVML,
 * the variable naming the job's cards (one of those gpu_env may name, docs/gpus.md), or RSMAP_CDI_DEVICE
 * (docs/containers.md), set over the task's own value; others are not ours to set. */
static int set_one(spank_t sp, const char *name_value) {
    static const char *const gpu[] = {"CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL=",
                                      "RSMAP_CDI_DEVICE="};
    const char *eq = strchr(name_value, '=');
    int gpu_variable = 0;
    for (size_t i = 0; i < sizeof gpu / sizeof *gpu; i++)
        if (!strncmp(name_value, gpu[i], strlen(gpu[i]))) gpu_variable = 1;
    if (!eq || (strncmp(name_value, "SGE_HGR_", 8) != 0 && !gpu_variable)) return 0; /* ours only */
    char name[256];
    if ((size_t)(eq - name_value) >= sizeof name) return -1;
    snprintf(name, sizeof name, "%.*s", (int)(eq - name_value), name_value);
    return spank_setenv(sp, name, eq + 1, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* Each NAME=value argument of JOB_ENTER's STATE answer (after its JSON). */
static int set_granted(void *ctx, unsigned code, int argc, char *const *argv) {
    for (int i = 1; code == RSMAP_STATE && i < argc; i++) {
        if (set_one((spank_t)ctx, argv[i]) != 0) return -1;
    }
    return 0;
}

/* In each task, after fork and before the job's user is taken on: JOB_ENTER from the task's own process
 * (rsmapd reads its pid from the socket) puts it under the grant's device policy, and the answer gives
 * its SGE_HGR_* variables. A job with a grant never runs a task outside its policy. */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av) {
    if (spank_configure(ac, av) < 0) return -1;
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
    char *arg = job_task(job);
    struct rsmap_outcome o = { .status = RSMAP_LOST };
    if (arg) call(RSMAP_JOB_ENTER, arg, set_granted, sp, &o);
    else snprintf(o.why, sizeof o.why, "out of memory for JOB_ENTER");
    free(arg);
    /* rsmap-shell inside the job finds the socket the plugin was configured with; rsmap-shell still believes
     * only a server of root's or daemon_user's, so a value the job sets itself is harmless. */
    if (o.status == RSMAP_OK && spank_socket[0] && spank_setenv(sp, "RSMAP_SOCKET", spank_socket, 1) != ESPANK_SUCCESS)
        slurm_info("rsmap: job %s: RSMAP_SOCKET not set in the task's environment", job);
    if (o.status == RSMAP_OK) return 0;
    /* Fail closed, whatever the category: no answer from a trusted rsmapd, no task. */
    slurm_error("rsmap: job %s: %s; the task does not run outside its device policy", job, o.why);
    return -1;
}

/* JOB_END as root from the epilog (also after scancel); the mark goes after it, so that rsmapd, if it
 * was away, releases the job at its next reconciliation. Never fails the node. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    if (spank_configure(ac, av) < 0) return 0;
    char job[32], dir[1200], refused[1300];
    if (job_id(sp, job, sizeof job) < 0) return 0;
    job_dir(job, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) < 0) return 0;
    char *arg = job_task(job);
    struct rsmap_outcome o = { .status = RSMAP_LOST };
    if (arg) call(RSMAP_JOB_END, arg, NULL, NULL, &o);
    else snprintf(o.why, sizeof o.why, "out of memory for JOB_END");
    free(arg);
    if (o.status < 0) slurm_error("rsmap: job %s: %s; rsmapd releases the job when back", job, o.why);
    else if (o.status == RSMAP_ERROR) slurm_info("rsmap: job %s: %s", job, o.why); /* nothing held (refused): gone anyway */
    snprintf(refused, sizeof refused, "%s/refused", dir);
    unlink(refused);
    if (rmdir(dir) < 0 && errno != ENOENT) slurm_error("rsmap: job %s: cannot remove %s: %s", job, dir, strerror(errno));
    return 0;
}
