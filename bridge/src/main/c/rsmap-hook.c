/* rsmap-hook: what sge_execd runs as prolog, starter_method and epilog - a small client of rsmapd's agent
 * protocol (docs/protocol.md), so that no JVM starts in the job path. Modes: prolog (JOB_START), starter
 * (JOB_ENTER, the granted environment, then exec of the job), epilog (JOB_END). Invoked under the name
 * rsmap-starter (a link; execd passes no arguments to a starter_method) it is the starter.
 *
 * Exit codes as execd reads them (sge_conf(5); docs/integration-ocs.md):
 *   prolog   0 granted (or nothing requested); 99 reschedule the job elsewhere (this host cannot serve it
 *            now, fails the job's RSMAP_FILTER or the admin limit, rsmapd unreachable, or the server is not
 *            trusted); 100 job error (its request or filter is refused, or too long to send whole).
 *   starter  the job's own status once it runs. Before that, fail closed: 99 rsmapd unreachable (execd
 *            reschedules a job that exits 99), 100 rsmapd refused JOB_ENTER, the server is not trusted, or
 *            JOB_ID is missing (job error state), 127 the command cannot be executed.
 *   epilog   0 once the grant is gone (also when there was none); 1 rsmapd unreachable, not trusted, or it
 *            refused JOB_END (execd puts the queue in error state: the grant may still be held).
 * Every answer comes from a server the kernel says is root or rsmapd's user (rsmap_check_server): a job's
 * owner sets RSMAP_SOCKET, but cannot make a socket of theirs speak for rsmapd. A job without RSMAP_REQUEST
 * requested no map: the prolog does nothing, but the starter still enters the job (rsmapd puts it under a
 * policy with no devices: no request, no device) and the epilog still ends it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "rsmap-client.h" /* the frames of the agent protocol, shared with the Slurm plugin */

enum { EXIT_RESCHEDULE = 99, EXIT_JOB_ERROR = 100, EXIT_CANNOT_EXEC = 127 };
enum { TIMEOUT_SECONDS = 30, TRIES = 3 };
/* What an exchange came to when rsmapd gave no answer (else RSMAP_OK or RSMAP_ERROR). */
enum { UNREACHABLE = -1, UNTRUSTED = -2, LOST = -3, TIMED_OUT = -4 };

static const char *command_name(unsigned code) {
    return code == RSMAP_JOB_START ? "JOB_START" : code == RSMAP_JOB_END ? "JOB_END" : "JOB_ENTER";
}

/* One command on a connection of its own: connect (checking who answers), INIT sent with the command
 * without waiting (one round trip less in the job path: frames are answered in order, seed 004 lets a
 * client send commands before earlier ones are answered), then the answer. Each NAME=value line of a STATE
 * event goes to on_line. A daemon that accepts but never answers must not hold a job start forever: after
 * TIMEOUT_SECONDS it counts as gone. RSMAP_OK, RSMAP_ERROR or one of the codes above; why says. */
static int exchange(unsigned code, const char *arg, rsmap_env_fn on_line, void *ctx, char *why, size_t cap) {
    int fd = rsmap_connect(NULL, why, cap); /* $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock */
    if (fd < 0) return errno == EPERM ? UNTRUSTED : UNREACHABLE;
    struct timeval tv = { .tv_sec = TIMEOUT_SECONDS };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const char *version[] = { "1" }, *argv[] = { arg };
    char refused[1024] = "";
    const char *during = command_name(code);
    int r = -1;
    errno = 0;
    if (rsmap_send(fd, 1, RSMAP_INIT, 1, version) == 0 && rsmap_send(fd, 2, code, 1, argv) == 0) {
        r = rsmap_finish(fd, 1, NULL, NULL, refused, sizeof refused);
        if (r == RSMAP_OK) r = rsmap_finish(fd, 2, on_line, ctx, why, cap);
        else if (r == RSMAP_ERROR) snprintf(why, cap, "rsmapd refused INIT: %s", refused);
        else during = "INIT";
    }
    int e = errno;
    close(fd);
    if (r == RSMAP_ERROR && *refused) return UNREACHABLE; /* another protocol version: not this host's rsmapd now */
    if (r >= 0) return r;
    if (e == EAGAIN || e == EWOULDBLOCK) {
        snprintf(why, cap, "rsmapd did not answer %s within %d s", during, TIMEOUT_SECONDS);
        return TIMED_OUT;
    }
    snprintf(why, cap, "lost rsmapd during %s", during);
    return LOST;
}

/* JOB_START and JOB_END once more after a lost answer: rsmapd may have done it and died before it answered,
 * and both are idempotent there (issue 11, hole 6: the same grant again for the same request; OK for a job
 * that holds nothing). Between tries rsmapd may be restarting: unreachable then is tried again too. An
 * answer - OK or ERROR - is final, and so is a server that is not trusted or does not answer in time. */
static int retried(unsigned code, const char *arg, rsmap_env_fn on_line, void *ctx, void (*reset)(void *),
                   char *why, size_t cap) {
    int r = exchange(code, arg, on_line, ctx, why, cap), t = 1;
    for (; t < TRIES && (r == LOST || (t > 1 && r == UNREACHABLE)); t++) {
        sleep((unsigned)t); /* 1 s, then 2 s: rsmapd restarts within RestartSec=2s */
        if (reset) reset(ctx);
        *why = '\0';
        r = exchange(code, arg, on_line, ctx, why, cap);
    }
    if (t > 1 && r < 0) {
        size_t n = strlen(why);
        snprintf(why + n, cap - n, " (%d tries)", t);
    }
    return r;
}

/* s as the body of a JSON string in out; -1 and one line on stderr when it does not fit: a cut value would
 * name another job, user or request (issue 12), so it is refused, never sent cut. */
static int quoted(char *out, size_t cap, const char *what, const char *s) {
    if (rsmap_json_string(out, cap, s) == 0) return 0;
    fprintf(stderr, "rsmap-hook: %s is too long (%zu bytes; it must fit in %zu once quoted for JSON): refused\n",
            what, strlen(s), cap - 8);
    return -1;
}

static int write_line(void *ctx, const char *line) {
    fprintf((FILE *)ctx, "%s\n", line);
    return 0;
}

/* Before a retried JOB_START: the lines of a lost answer go, the new answer's are written. */
static void restart_file(void *ctx) {
    FILE *f = ctx;
    if (f == stdout) return;
    fflush(f);
    if (ftruncate(fileno(f), 0) == 0) rewind(f);
}

extern char **environ;

/* The NAME=value lines of JOB_ENTER's answer, NUL-separated: what the job runs with, from rsmapd alone -
 * its SGE_HGR_* and, on a host whose gpu_map is built from NVML, the variable naming its cards
 * (CUDA_VISIBLE_DEVICES, docs/gpus.md). */
static char granted[RSMAP_MAX_FRAME];
static size_t granted_used;
static int granted_count;

/* Whether line sets a variable the answer may set: SGE_HGR_<map>, or one of the GPU variables rsmapd.conf's
 * gpu_env may name (docs/gpus.md) - never another of the job's environment (LD_PRELOAD, PATH, ...). */
static int ours(const char *line) {
    static const char *const gpu[] = {"CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL="};
    if (!strncmp(line, "SGE_HGR_", 8)) return strchr(line, '=') != NULL;
    for (size_t i = 0; i < sizeof gpu / sizeof *gpu; i++)
        if (!strncmp(line, gpu[i], strlen(gpu[i]))) return 1;
    return 0;
}

/* Whether the answer set the variable of env entry e ("NAME=value"). */
static int set_by_answer(const char *e) {
    size_t name = strcspn(e, "=");
    for (size_t p = 0; p < granted_used; p += strlen(granted + p) + 1)
        if (!strncmp(granted + p, e, name) && granted[p + name] == '=') return 1;
    return 0;
}

static int keep_granted(void *ctx, const char *line) {
    (void)ctx;
    size_t len = strlen(line);
    /* The grant's variables only: the answer sets nothing else of the job's environment. */
    if (!ours(line) || granted_used + len + 1 > sizeof granted) return 0;
    memcpy(granted + granted_used, line, len + 1);
    granted_used += len + 1;
    granted_count++;
    return 0;
}

/* Whether execd runs this job as a binary (qsub -b y): handle_as_binary in the job's config file. */
static int binary_job(void) {
    const char *dir = getenv("SGE_JOB_SPOOL_DIR");
    char path[4096], line[256];
    if (!dir || !*dir || snprintf(path, sizeof path, "%s/config", dir) >= (int)sizeof path) return 1;
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    int binary = 1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "handle_as_binary=", 17) == 0) binary = atoi(line + 17) != 0;
    }
    fclose(f);
    return binary;
}

/* Runs the job as execd's own starter would (sge_shepherd, start_command): with shell_start_mode
 * posix_compliant a job script goes to the job's shell (qsub -S, else the queue's shell), with
 * script_from_stdin execd already put the script on stdin and passes "-s" and the arguments; binaries and
 * unix_behavior run as given. */
static int exec_job(char **cmd, char **env) {
    const char *shell = getenv("SGE_STARTER_SHELL_PATH"), *mode = getenv("SGE_STARTER_SHELL_START_MODE");
    int via_shell = shell && *shell && mode &&
                    (!strcmp(mode, "script_from_stdin") || (!strcmp(mode, "posix_compliant") && !binary_job()));
    if (via_shell) {
        int n = 0;
        while (cmd[n]) n++;
        char **argv = calloc((size_t)n + 2, sizeof *argv);
        const char *base = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
        char login[256];
        const char *use_login = getenv("SGE_STARTER_USE_LOGIN_SHELL");
        snprintf(login, sizeof login, "-%s", base); /* argv[0] "-sh" asks for a login shell */
        if (!argv) return EXIT_CANNOT_EXEC;
        argv[0] = (char *)(use_login && !strcmp(use_login, "true") ? login : base);
        memcpy(argv + 1, cmd, (size_t)n * sizeof *argv);
        execve(shell, argv, env);
        fprintf(stderr, "rsmap-hook: cannot exec %s: %s\n", shell, strerror(errno));
        return EXIT_CANNOT_EXEC;
    }
    execvpe(cmd[0], cmd, env);
    fprintf(stderr, "rsmap-hook: cannot exec %s: %s\n", cmd[0], strerror(errno));
    return EXIT_CANNOT_EXEC;
}

/* starter: the job's own process, already running as the job's owner (execd honours no user@ on a
 * starter_method). Every job enters first, whether or not it requested a map: JOB_ENTER makes rsmapd put
 * this pid (SO_PEERCRED) under the job's device policy - with no devices for a job that holds nothing here,
 * as Flux's gpubind hides every GPU from a job granted none - and answer with the grant. Every SGE_HGR_* the
 * job brought is dropped (seed 002: set by the execution daemon alone), as is its own value of every other
 * variable the answer sets (CUDA_VISIBLE_DEVICES), and the granted ones are set from that answer - never from a file or variable the job's owner could have written. Fail closed: no answer
 * from a trusted rsmapd, no job. */
static int starter(char **cmd) {
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID");
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return EXIT_JOB_ERROR;
    }
    char why[4096] = "", ej[256], et[256], arg[600];
    if (quoted(ej, sizeof ej, "JOB_ID", job) < 0 ||
        quoted(et, sizeof et, "SGE_TASK_ID", task && *task ? task : "undefined") < 0)
        return EXIT_JOB_ERROR;
    snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"}", ej, et);
    int r = exchange(RSMAP_JOB_ENTER, arg, keep_granted, NULL, why, sizeof why);
    if (r != RSMAP_OK) {
        fprintf(stderr, "rsmap-hook: %s\n", why);
        /* A server that is not trusted is most likely the job's own RSMAP_SOCKET: the job's error, not the host's. */
        return r == RSMAP_ERROR || r == UNTRUSTED ? EXIT_JOB_ERROR : EXIT_RESCHEDULE;
    }
    /* Installed set-group-ID rsmap (packaging), the starter can reach a socket of mode 0660; the job must
     * not keep that group: real, effective and saved group all become the owner's again. */
    gid_t gid = getgid();
    if (getegid() != gid && setresgid(gid, gid, gid) != 0) {
        fprintf(stderr, "rsmap-hook: cannot drop the rsmap group: %s\n", strerror(errno));
        return EXIT_JOB_ERROR;
    }
    size_t n = 0;
    for (char **e = environ; *e; e++) n++;
    char **env = calloc(n + (size_t)granted_count + 1, sizeof *env);
    if (!env) {
        fprintf(stderr, "rsmap-hook: out of memory\n");
        return EXIT_JOB_ERROR;
    }
    size_t k = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "SGE_HGR_", 8) != 0 && !set_by_answer(*e)) env[k++] = *e;
    }
    for (size_t p = 0; p < granted_used; p += strlen(granted + p) + 1) env[k++] = granted + p;
    env[k] = NULL;
    return exec_job(cmd, env);
}

static int usage(void) {
    fprintf(stderr, "usage: rsmap-hook prolog|epilog, rsmap-hook starter COMMAND..., rsmap-starter COMMAND...\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (*name == '-') name++; /* execd starts a starter_method as a login shell: "-rsmap-starter" */
    if (!strcmp(name, "rsmap-starter")) return argc >= 2 ? starter(argv + 1) : usage();
    if (argc >= 2 && !strcmp(argv[1], "starter")) return argc >= 3 ? starter(argv + 2) : usage();
    if (argc != 2 || (strcmp(argv[1], "prolog") && strcmp(argv[1], "epilog"))) return usage();
    int prolog = !strcmp(argv[1], "prolog");
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID"), *slots = getenv("NSLOTS");
    const char *request = getenv("RSMAP_REQUEST");
    const char *filter = getenv("RSMAP_FILTER"); /* the job's node filter (issue 15, docs/filters.md) */
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return prolog ? EXIT_JOB_ERROR : 1;
    }
    char why[4096] = "", ej[256], et[256], eu[256], er[65536];
    static char ef[65536 + 16], arg[140000];
    if (quoted(ej, sizeof ej, "JOB_ID", job) < 0 ||
        quoted(et, sizeof et, "SGE_TASK_ID", task && *task ? task : "undefined") < 0)
        return prolog ? EXIT_JOB_ERROR : 1;
    if (!prolog) {
        /* No request needed: JOB_END names the job, and a job that holds nothing here is answered OK. */
        snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"}", ej, et);
        int r = retried(RSMAP_JOB_END, arg, NULL, NULL, NULL, why, sizeof why);
        if (r == RSMAP_OK) return 0;
        /* Refused (not root or the admin, ...) or unanswered: the grant may still be held. execd puts the
         * queue in error state on a non-zero epilog, so that nothing new starts beside it (issue 11, hole 7). */
        fprintf(stderr, "rsmap-hook: %s\n", why);
        return 1;
    }
    int filtered = filter && *filter;
    if ((!request || !*request) && !filtered) return 0; /* no map and no filter: nothing to grant or check */
    /* The job's owner, as execd set it in the job's environment (USER, LOGNAME: from the passwd entry of the
     * owner, overriding whatever the job brought): rsmapd admits only this user to JOB_ENTER. */
    const char *user = getenv("USER");
    if (!user || !*user) user = getenv("LOGNAME");
    if (quoted(eu, sizeof eu, "USER", user ? user : "") < 0 ||
        quoted(er, sizeof er, "RSMAP_REQUEST", request ? request : "") < 0 ||
        (filtered && quoted(ef, sizeof ef, "RSMAP_FILTER", filter) < 0))
        return EXIT_JOB_ERROR;
    int o = snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"", ej, et);
    if (*eu) o += snprintf(arg + o, sizeof arg - (size_t)o, ",\"user\":\"%s\"", eu);
    o += snprintf(arg + o, sizeof arg - (size_t)o, ",\"slots\":%d,\"request\":\"%s\"", slots ? atoi(slots) : 1, er);
    if (filtered) o += snprintf(arg + o, sizeof arg - (size_t)o, ",\"filter\":\"%s\"", ef);
    snprintf(arg + o, sizeof arg - (size_t)o, "}");
    /* For admins: what was granted. The starter does not read it (the job could have written it). */
    const char *dir = getenv("SGE_JOB_SPOOL_DIR");
    char envfile[4096];
    FILE *env = stdout;
    if (dir && *dir && snprintf(envfile, sizeof envfile, "%s/rsmap.env", dir) < (int)sizeof envfile) {
        env = fopen(envfile, "w");
        if (!env) {
            fprintf(stderr, "rsmap-hook: cannot write %s: %s\n", envfile, strerror(errno));
            return EXIT_RESCHEDULE;
        }
    }
    int r = retried(RSMAP_JOB_START, arg, write_line, env, restart_file, why, sizeof why);
    if (env != stdout && fclose(env) != 0 && r == RSMAP_OK) {
        fprintf(stderr, "rsmap-hook: cannot write %s: %s\n", envfile, strerror(errno));
        return EXIT_RESCHEDULE;
    }
    if (r == RSMAP_OK) return 0;
    fprintf(stderr, "rsmap-hook: %s\n", why);
    /* A request or filter that does not parse is the job's fault; anything else may work on another host:
     * a host that fails the filter ("filter: job filter fails on ...", "filter: admin limit fails on ...")
     * was chosen wrongly by the scheduler (FilterCheck.java). */
    int job_fault = r == RSMAP_ERROR &&
        (strncmp(why, "request:", 8) == 0 ||
         (strncmp(why, "filter:", 7) == 0 && strncmp(why, "filter: job filter fails on ", 28) != 0 &&
          strncmp(why, "filter: admin limit fails on ", 29) != 0));
    return job_fault ? EXIT_JOB_ERROR : EXIT_RESCHEDULE;
}
