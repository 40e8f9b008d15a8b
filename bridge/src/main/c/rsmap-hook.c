/* rsmap-hook: what sge_execd runs as prolog, starter_method and epilog - a small client of rsmapd's agent
 * protocol (docs/protocol.md), so that no JVM starts in the job path. Modes: prolog (JOB_START), starter
 * (JOB_ENTER, the granted environment, then exec of the job), epilog (JOB_END). Invoked under the name
 * rsmap-starter (a link; execd passes no arguments to a starter_method) it is the starter.
 *
 * Exit codes as execd reads them (sge_conf(5); docs/integration-ocs.md):
 *   prolog   0 granted (or nothing requested); 99 reschedule the job elsewhere (this host cannot serve it
 *            now, rsmapd unreachable); 100 job error (its request is refused).
 *   starter  the job's own status once it runs. Before that, fail closed: 99 rsmapd unreachable (execd
 *            reschedules a job that exits 99), 100 rsmapd refused JOB_ENTER or JOB_ID is missing (job
 *            error state), 127 the command cannot be executed.
 *   epilog   0 once the grant is gone (also when there was none); 1 rsmapd unreachable (execd puts the
 *            queue in error state: the grant may still be held).
 * A job without RSMAP_REQUEST requested no map: prolog and epilog do nothing, the starter only drops
 * SGE_HGR_*. */
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
enum { TIMEOUT_SECONDS = 30 };

/* A daemon that accepts but never answers must not hold a job start forever: it counts as unreachable. */
static int connect_daemon(void) {
    int fd = rsmap_connect(NULL); /* $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock */
    if (fd < 0) return -1;
    struct timeval tv = { .tv_sec = TIMEOUT_SECONDS };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

/* INIT goes out with the first command, without waiting: one round trip less in the job path (frames are
 * answered in order; seed 004 lets a client send commands before earlier ones are answered). */
static int init_pending;

/* Sends a command with one argument and waits for its OK or ERROR; each NAME=value line of a STATE event
 * goes to on_line. -1 when the connection fails or the answer is garbled, or INIT was refused (why says). */
static int call(int fd, unsigned tid, unsigned code, const char *arg, rsmap_env_fn on_line, void *ctx, char *why,
                size_t cap) {
    const char *argv[] = { arg };
    if (rsmap_send(fd, tid, code, 1, argv) < 0) return -1;
    if (init_pending) {
        init_pending = 0;
        char refused[1024] = "";
        int r = rsmap_finish(fd, 1, NULL, NULL, refused, sizeof refused);
        if (r != RSMAP_OK) {
            snprintf(why, cap, r == RSMAP_ERROR ? "rsmapd refused INIT: %s" : "lost rsmapd during INIT%s", refused);
            return -1;
        }
    }
    return rsmap_finish(fd, tid, on_line, ctx, why, cap);
}

/* Connects and sends INIT 1 (answered with the first command); -1 (reason in why) when rsmapd cannot be
 * reached. */
static int open_session(char *why, size_t cap) {
    int fd = connect_daemon();
    if (fd < 0) {
        snprintf(why, cap, "cannot reach rsmapd: %s", strerror(errno));
        return -1;
    }
    const char *version[] = { "1" };
    if (rsmap_send(fd, 1, RSMAP_INIT, 1, version) < 0) {
        snprintf(why, cap, "lost rsmapd during INIT");
        close(fd);
        return -1;
    }
    init_pending = 1;
    return fd;
}

static int write_line(void *ctx, const char *line) {
    fprintf((FILE *)ctx, "%s\n", line);
    return 0;
}

extern char **environ;

/* The SGE_HGR_* lines of JOB_ENTER's answer, NUL-separated: what the job runs with, from rsmapd alone. */
static char granted[RSMAP_MAX_FRAME];
static size_t granted_used;
static int granted_count;

static int keep_granted(void *ctx, const char *line) {
    (void)ctx;
    size_t len = strlen(line);
    /* Only SGE_HGR_ names: the answer sets the grant, nothing else of the job's environment. */
    if (strncmp(line, "SGE_HGR_", 8) != 0 || !strchr(line, '=') || granted_used + len + 1 > sizeof granted) return 0;
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
 * starter_method). A job that requested a map enters its grant first: JOB_ENTER makes rsmapd put this pid
 * (SO_PEERCRED) under the job's device policy and answer with the grant. Every SGE_HGR_* the job brought
 * is dropped (seed 002: set by the execution daemon alone) and the granted ones are set from that answer -
 * never from a file or variable the job's owner could have written. Fail closed: no answer, no job. */
static int starter(char **cmd) {
    const char *request = getenv("RSMAP_REQUEST");
    if (request && *request) {
        const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID");
        if (!job || !*job) {
            fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
            return EXIT_JOB_ERROR;
        }
        char why[4096] = "", ej[256], et[256], arg[600];
        int fd = open_session(why, sizeof why);
        if (fd < 0) {
            fprintf(stderr, "rsmap-hook: %s\n", why);
            return EXIT_RESCHEDULE;
        }
        (void)rsmap_json_string(ej, sizeof ej, job);
        (void)rsmap_json_string(et, sizeof et, task && *task ? task : "undefined");
        snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"}", ej, et);
        int r = call(fd, 2, RSMAP_JOB_ENTER, arg, keep_granted, NULL, why, sizeof why);
        close(fd);
        if (r < 0) {
            fprintf(stderr, "rsmap-hook: %s\n", *why ? why : "lost rsmapd during JOB_ENTER");
            return EXIT_RESCHEDULE;
        }
        if (r == RSMAP_ERROR) {
            fprintf(stderr, "rsmap-hook: %s\n", why);
            return EXIT_JOB_ERROR;
        }
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
        if (strncmp(*e, "SGE_HGR_", 8) != 0) env[k++] = *e;
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
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return prolog ? EXIT_JOB_ERROR : 1;
    }
    if (!request || !*request) return 0; /* the job requests no resource map: nothing to grant or give back */
    char why[4096] = "", ej[256], et[256], eu[256], er[65536];
    static char arg[70000];
    int fd = open_session(why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "rsmap-hook: %s\n", why);
        return prolog ? EXIT_RESCHEDULE : 1;
    }
    (void)rsmap_json_string(ej, sizeof ej, job);
    (void)rsmap_json_string(et, sizeof et, task && *task ? task : "undefined");
    if (prolog) {
        /* The job's owner, as execd set it in the job's environment (USER, LOGNAME: from the passwd entry of
         * the owner, overriding whatever the job brought): rsmapd admits only this user to JOB_ENTER. */
        const char *user = getenv("USER");
        if (!user || !*user) user = getenv("LOGNAME");
        (void)rsmap_json_string(eu, sizeof eu, user ? user : "");
        (void)rsmap_json_string(er, sizeof er, request);
        int o = snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"", ej, et);
        if (*eu) o += snprintf(arg + o, sizeof arg - (size_t)o, ",\"user\":\"%s\"", eu);
        snprintf(arg + o, sizeof arg - (size_t)o, ",\"slots\":%d,\"request\":\"%s\"}", slots ? atoi(slots) : 1, er);
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
        int r = call(fd, 2, RSMAP_JOB_START, arg, write_line, env, why, sizeof why);
        if (env != stdout && fclose(env) != 0) r = -1;
        if (r == RSMAP_OK) return 0;
        if (r < 0) {
            fprintf(stderr, "rsmap-hook: %s\n", *why ? why : "lost rsmapd during JOB_START");
            return EXIT_RESCHEDULE;
        }
        fprintf(stderr, "rsmap-hook: %s\n", why);
        /* A request that does not parse is the job's fault; anything else may work on another host. */
        return strncmp(why, "request:", 8) == 0 ? EXIT_JOB_ERROR : EXIT_RESCHEDULE;
    }
    snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"}", ej, et);
    int r = call(fd, 2, RSMAP_JOB_END, arg, NULL, NULL, why, sizeof why);
    if (r < 0) {
        fprintf(stderr, "rsmap-hook: %s\n", *why ? why : "lost rsmapd during JOB_END");
        return 1;
    }
    if (r == RSMAP_ERROR) fprintf(stderr, "rsmap-hook: %s\n", why); /* nothing held: the grant is gone anyway */
    return 0;
}
