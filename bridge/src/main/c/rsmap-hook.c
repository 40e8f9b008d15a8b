/* rsmap-hook: what sge_execd runs as prolog, starter_method and epilog - a small client of rsmapd's agent
 * protocol (docs/protocol.md), so that no JVM starts in the job path. Modes: prolog (JOB_START), starter
 * (JOB_ENTER, the granted environment, then exec of the job), epilog (JOB_END). Invoked under the name
 * rsmap-starter (a link; execd passes no arguments to a starter_method) it is the starter.
 *
 * Exit codes as execd reads them (sge_conf(5); docs/integration-ocs.md), decided by rsmapd's ERROR category
 * (docs/protocol.md, "Error categories"), never by its wording:
 *   prolog   0 granted (or nothing requested); 99 reschedule the job elsewhere: ERROR busy, denied,
 *            unavailable or internal, rsmapd unreachable or not answering within the timeout, or the server
 *            is not trusted; 100 job error: ERROR refused or malformed (its request or filter), or a value
 *            too long to send whole. An ERROR without a category (an rsmapd older than the categories):
 *            100 when its reason starts with "request:" or "filter:" (but not "filter: job filter fails on",
 *            "filter: admin limit fails on"), else 99.
 *   starter  the job's own status once it runs. Before that, fail closed: 99 ERROR busy, unavailable or
 *            internal, rsmapd unreachable or not answering (execd reschedules a job that exits 99); 100
 *            ERROR refused, denied, malformed or without a category, the server is not trusted, or JOB_ID is
 *            missing (job error state); 127 the command cannot be executed.
 *   epilog   0 once the grant is gone (also when there was none); 1 rsmapd unreachable, not answering,
 *            not trusted, or any ERROR (execd puts the queue in error state: the grant may still be held).
 * Every wait ends within TIMEOUT_SECONDS (30 s; $RSMAP_TIMEOUT may make it shorter) of the start: connect,
 * the answer and the retries of JOB_START and JOB_END after a lost connection, all together.
 * Every answer comes from a server the kernel says is root or rsmapd's user (rsmap_check_server): a job's
 * owner sets RSMAP_SOCKET, but cannot make a socket of theirs speak for rsmapd. A job without RSMAP_REQUEST
 * requested no map: the prolog does nothing, but the starter still enters the job (rsmapd puts it under a
 * policy with no devices: no request, no device) and the epilog still ends it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsmap-client.h" /* the one exchange of the C clients (rsmap-exchange.c), shared with the Slurm plugin */
#include "rsmap-request.h" /* the form of a request, for the JSV's check-request */

enum { EXIT_RESCHEDULE = 99, EXIT_JOB_ERROR = 100, EXIT_CANNOT_EXEC = 127 };
enum { TIMEOUT_SECONDS = 30 };

/* One command to rsmapd (rsmap_exchange: connect, peer check, INIT, the answer, all bounded); JOB_START
 * and JOB_END are idempotent there and tried again after a lost connection. */
static void call(unsigned code, const char *arg, rsmap_event_fn on_event, void *ctx, void (*reset)(void *),
                 struct rsmap_outcome *out) {
    struct rsmap_request r = { .code = code, .arg = arg, .timeout_ms = rsmap_timeout_ms(TIMEOUT_SECONDS * 1000),
                               .idempotent = code != RSMAP_JOB_ENTER, .on_event = on_event, .ctx = ctx,
                               .reset = reset };
    rsmap_exchange(&r, out);
}

/* The prolog's exit for an answer other than OK (docs/protocol.md, "Error categories"). */
static int prolog_exit(const struct rsmap_outcome *o) {
    if (o->status != RSMAP_ERROR) return EXIT_RESCHEDULE; /* no answer: this host cannot serve it now */
    switch (o->category) {
    case RSMAP_CAT_REFUSED:
    case RSMAP_CAT_MALFORMED: return EXIT_JOB_ERROR;
    case RSMAP_CAT_BUSY:
    case RSMAP_CAT_DENIED:
    case RSMAP_CAT_UNAVAILABLE:
    case RSMAP_CAT_INTERNAL: return EXIT_RESCHEDULE;
    case RSMAP_CAT_NONE: break;
    }
    /* An rsmapd older than the categories: its reasons' first words said it. A request or filter that does
     * not parse is the job's fault; a host that fails the filter was chosen wrongly by the scheduler. */
    const char *why = o->why;
    int job_fault = strncmp(why, "request:", 8) == 0 ||
        (strncmp(why, "filter:", 7) == 0 && strncmp(why, "filter: job filter fails on ", 28) != 0 &&
         strncmp(why, "filter: admin limit fails on ", 29) != 0);
    return job_fault ? EXIT_JOB_ERROR : EXIT_RESCHEDULE;
}

/* The starter's exit for an answer other than OK: the job does not run here either way. */
static int starter_exit(const struct rsmap_outcome *o) {
    switch (o->status) {
    case RSMAP_ERROR:
        return o->category == RSMAP_CAT_BUSY || o->category == RSMAP_CAT_UNAVAILABLE ||
               o->category == RSMAP_CAT_INTERNAL ? EXIT_RESCHEDULE : EXIT_JOB_ERROR;
    /* A server that is not trusted is most likely the job's own RSMAP_SOCKET: the job's error, not the host's. */
    case RSMAP_UNTRUSTED: return EXIT_JOB_ERROR;
    default: return EXIT_RESCHEDULE;
    }
}

/* s as the body of a JSON string in out; -1 and one line on stderr when it does not fit: a cut value would
 * name another job, user or request, so it is refused, never sent cut. */
static int quoted(char *out, size_t cap, const char *what, const char *s) {
    if (rsmap_json_string(out, cap, s) == 0) return 0;
    fprintf(stderr, "rsmap-hook: %s is too long (%zu bytes; it must fit in %zu once quoted for JSON): refused\n",
            what, strlen(s), cap - 8);
    return -1;
}

/* Each NAME=value argument of the STATE answer (after its JSON) to the FILE ctx. */
static int write_lines(void *ctx, unsigned code, int argc, char *const *argv) {
    for (int i = 1; code == RSMAP_STATE && i < argc; i++) fprintf((FILE *)ctx, "%s\n", argv[i]);
    return 0;
}

/* Before a retried JOB_START: the lines of a lost answer go, the new answer's are written. */
static void restart_file(void *ctx) {
    FILE *f = ctx;
    if (f == stdout) return;
    fflush(f);
    if (ftruncate(fileno(f), 0) == 0) rewind(f);
}

/* {"job":J,"task":T}: T is SGE_TASK_ID, "undefined" for a job that is not an array. NULL: out of memory. */
static char *job_task(const char *job, const char *task) {
    struct rsmap_json j;
    rsmap_json_begin(&j);
    rsmap_json_str(&j, "job", job);
    rsmap_json_str(&j, "task", task && *task ? task : "undefined");
    return rsmap_json_end(&j);
}

extern char **environ;

/* The NAME=value lines of JOB_ENTER's answer, NUL-separated: what the job runs with, from rsmapd alone -
 * its SGE_HGR_* and, on a host whose gpu_map is built from NVML, the variable naming its cards
 * (CUDA_VISIBLE_DEVICES, docs/gpus.md). */
static char granted[RSMAP_MAX_FRAME];
static size_t granted_used;
static int granted_count;

/* Whether line sets a variable the answer may set: SGE_HGR_<map>, one of the GPU variables rsmapd.conf's
 * gpu_env may name (docs/gpus.md), or RSMAP_CDI_DEVICE, the job's CDI device (docs/containers.md) - never
 * another of the job's environment (LD_PRELOAD, PATH, ...). */
static int ours(const char *line) {
    static const char *const gpu[] = {"CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL=",
                                      "RSMAP_CDI_DEVICE="};
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

static int keep_granted(void *ctx, unsigned code, int argc, char *const *argv) {
    (void)ctx;
    for (int i = 1; code == RSMAP_STATE && i < argc; i++) {
        const char *line = argv[i];
        size_t len = strlen(line);
        /* The grant's variables only: the answer sets nothing else of the job's environment. */
        if (!ours(line) || granted_used + len + 1 > sizeof granted) continue;
        memcpy(granted + granted_used, line, len + 1);
        granted_used += len + 1;
        granted_count++;
    }
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
    /* A pe task of qrsh -inherit under Son of Grid Engine 8.1's builtin rsh: the shepherd hands the starter
     * the task's command line as one argument (the same text as QRSH_COMMAND) and no shell
     * (SGE_STARTER_SHELL_PATH empty); execd's own starter runs it as rshd would, with the owner's login
     * shell (SHELL, from the passwd entry) and -c. Open Cluster Scheduler hands qrsh_starter and its
     * arguments instead, which run as given below. */
    const char *qrsh = getenv("QRSH_COMMAND");
    if (shell && !*shell && qrsh && cmd[0] && !cmd[1] && !strcmp(cmd[0], qrsh)) {
        const char *login = getenv("SHELL");
        if (!login || !*login) login = "/bin/sh";
        const char *base = strrchr(login, '/') ? strrchr(login, '/') + 1 : login;
        char *argv[] = {(char *)base, "-c", cmd[0], NULL};
        execve(login, argv, env);
        fprintf(stderr, "rsmap-hook: cannot exec %s: %s\n", login, strerror(errno));
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
 * job brought is dropped (Grid Engine's RSMAP manual: set by the execution daemon alone), and so is its RSMAP_CDI_DEVICE
 * (docs/containers.md), as is its own value of every other
 * variable the answer sets (CUDA_VISIBLE_DEVICES), and the granted ones are set from that answer - never from a file or variable the job's owner could have written. Fail closed: no answer
 * from a trusted rsmapd, no job. */
static int starter(char **cmd) {
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID");
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return EXIT_JOB_ERROR;
    }
    char ej[256], et[256];
    if (quoted(ej, sizeof ej, "JOB_ID", job) < 0 ||
        quoted(et, sizeof et, "SGE_TASK_ID", task && *task ? task : "undefined") < 0)
        return EXIT_JOB_ERROR;
    char *arg = job_task(job, task);
    struct rsmap_outcome o;
    call(RSMAP_JOB_ENTER, arg ? arg : "{}", keep_granted, NULL, NULL, &o);
    free(arg);
    if (o.status != RSMAP_OK) {
        fprintf(stderr, "rsmap-hook: %s\n", o.why);
        return starter_exit(&o);
    }
    /* Installed set-group-ID rsmap, the starter (packaging) can reach a socket of mode 0660; the job must
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
        /* RSMAP_CDI_DEVICE is rsmapd's alone: a job's own value never names another job's device. */
        if (strncmp(*e, "SGE_HGR_", 8) != 0 && strncmp(*e, "RSMAP_CDI_DEVICE=", 17) != 0 && !set_by_answer(*e))
            env[k++] = *e;
    }
    for (size_t p = 0; p < granted_used; p += strlen(granted + p) + 1) env[k++] = granted + p;
    env[k] = NULL;
    return exec_job(cmd, env);
}

static int usage(void) {
    fprintf(stderr, "usage: rsmap-hook prolog|epilog, rsmap-hook starter COMMAND..., rsmap-starter COMMAND..., "
                    "rsmap-hook check-request REQUEST\n");
    return 2;
}

/* check-request REQUEST, for the JSV: the form of RSMAP_REQUEST without a JVM per submitted job (exit 2
 * and the parser's words when it cannot be a request on any host; what needs the complex table is
 * rsmapd's at job start). */
static int check_request(char **args) {
    char why[4096];
    if (rsmap_request_check(args[0], why, sizeof why) == 0) return 0;
    fprintf(stderr, "error: %s\n", why);
    return 2;
}

/* epilog: JOB_END. No request needed: JOB_END names the job, and a job that holds nothing here is answered OK. */
static int epilog(char **args) {
    (void)args;
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID");
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return 1;
    }
    char ej[256], et[256];
    if (quoted(ej, sizeof ej, "JOB_ID", job) < 0 ||
        quoted(et, sizeof et, "SGE_TASK_ID", task && *task ? task : "undefined") < 0)
        return 1;
    char *arg = job_task(job, task);
    struct rsmap_outcome o;
    call(RSMAP_JOB_END, arg ? arg : "{}", NULL, NULL, NULL, &o);
    free(arg);
    if (o.status == RSMAP_OK) return 0;
    /* Refused or unanswered: the grant may still be held. execd puts the queue in error state on a non-zero
     * epilog, so that nothing new starts beside it. */
    fprintf(stderr, "rsmap-hook: %s\n", o.why);
    return 1;
}

/* prolog: JOB_START with the job's request and filter. */
static int prolog(char **args) {
    (void)args;
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID"), *slots = getenv("NSLOTS");
    const char *request = getenv("RSMAP_REQUEST");
    const char *filter = getenv("RSMAP_FILTER"); /* the job's node filter (docs/filters.md) */
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return EXIT_JOB_ERROR;
    }
    char ej[256], et[256], eu[256];
    static char er[65536], ef[65536 + 16];
    if (quoted(ej, sizeof ej, "JOB_ID", job) < 0 ||
        quoted(et, sizeof et, "SGE_TASK_ID", task && *task ? task : "undefined") < 0)
        return EXIT_JOB_ERROR;
    int filtered = filter && *filter;
    if ((!request || !*request) && !filtered) return 0; /* no map and no filter: nothing to grant or check */
    /* The job's owner, as execd set it in the job's environment (USER, LOGNAME: from the passwd entry of the
     * owner, overriding whatever the job brought): rsmapd admits only this user to JOB_ENTER. */
    const char *user = getenv("USER");
    if (!user || !*user) user = getenv("LOGNAME");
    /* A cut value would name another job, user or request: too long is refused, never sent cut. */
    if (quoted(eu, sizeof eu, "USER", user ? user : "") < 0 ||
        quoted(er, sizeof er, "RSMAP_REQUEST", request ? request : "") < 0 ||
        (filtered && quoted(ef, sizeof ef, "RSMAP_FILTER", filter) < 0))
        return EXIT_JOB_ERROR;
    struct rsmap_json j;
    rsmap_json_begin(&j);
    rsmap_json_str(&j, "job", job);
    rsmap_json_str(&j, "task", task && *task ? task : "undefined");
    if (user && *user) rsmap_json_str(&j, "user", user);
    rsmap_json_int(&j, "slots", slots ? atoi(slots) : 1);
    rsmap_json_str(&j, "request", request ? request : "");
    if (filtered) rsmap_json_str(&j, "filter", filter);
    char *arg = rsmap_json_end(&j);
    if (!arg) {
        fprintf(stderr, "rsmap-hook: out of memory\n");
        return EXIT_RESCHEDULE;
    }
    /* For admins: what was granted. The starter does not read it (the job could have written it). */
    const char *dir = getenv("SGE_JOB_SPOOL_DIR");
    char envfile[4096];
    FILE *env = stdout;
    if (dir && *dir && snprintf(envfile, sizeof envfile, "%s/rsmap.env", dir) < (int)sizeof envfile) {
        env = fopen(envfile, "w");
        if (!env) {
            fprintf(stderr, "rsmap-hook: cannot write %s: %s\n", envfile, strerror(errno));
            free(arg);
            return EXIT_RESCHEDULE;
        }
    }
    struct rsmap_outcome o;
    call(RSMAP_JOB_START, arg, write_lines, env, restart_file, &o);
    free(arg);
    if (env != stdout && fclose(env) != 0 && o.status == RSMAP_OK) {
        fprintf(stderr, "rsmap-hook: cannot write %s: %s\n", envfile, strerror(errno));
        return EXIT_RESCHEDULE;
    }
    if (o.status == RSMAP_OK) return 0;
    fprintf(stderr, "rsmap-hook: %s\n", o.why);
    return prolog_exit(&o);
}

/* The modes: argv[1] (or the name rsmap-starter), and how many arguments each takes after it (-1: any). */
static const struct mode {
    const char *name;
    int (*run)(char **args);
    int min_args, max_args;
} MODES[] = {
    { "prolog", prolog, 0, 0 },
    { "epilog", epilog, 0, 0 },
    { "starter", starter, 1, -1 },
    { "check-request", check_request, 1, 1 },
};

int main(int argc, char **argv) {
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (*name == '-') name++; /* execd starts a starter_method as a login shell: "-rsmap-starter" */
    if (!strcmp(name, "rsmap-starter")) return argc >= 2 ? starter(argv + 1) : usage();
    for (size_t i = 0; argc >= 2 && i < sizeof MODES / sizeof *MODES; i++) {
        const struct mode *m = &MODES[i];
        int n = argc - 2;
        if (strcmp(argv[1], m->name) != 0) continue;
        if (n < m->min_args || (m->max_args >= 0 && n > m->max_args)) return usage();
        return m->run(argv + 2);
    }
    return usage();
}
