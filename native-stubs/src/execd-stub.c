/* execd-stub: runs one job the way sge_execd does, for rsmapd's integration tests - the spool directory
 * <spool>/<host>/active_jobs/<job>.<task>/ with its environment file, then prolog, starter_method + job,
 * epilog, each with the job's environment, and execd's meaning of the prolog's exit code (99 reschedule,
 * 100 job error). Usage:
 *   execd-stub --spool DIR --host NAME --job ID [--task N] [--slots N] [--prolog CMD] [--starter CMD]
 *              [--epilog CMD] [--keep] -- JOB-COMMAND...
 * CMD is one executable path with its arguments separated by spaces. Exit: the job's exit status, or 99 /
 * 100 when the prolog asked for it (printed as "rescheduled" / "job error"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int run(const char *what, char **argv) {
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 127; }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "execd-stub: cannot run %s %s: %s\n", what, argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) { perror("waitpid"); return 127; }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Splits "a b c" into argv (in place), then appends extra. */
static int split(char *cmd, char **out, int max, char **extra) {
    int n = 0;
    for (char *t = strtok(cmd, " "); t && n < max - 1; t = strtok(NULL, " ")) out[n++] = t;
    for (; extra && *extra && n < max - 1; extra++) out[n++] = *extra;
    out[n] = NULL;
    return n;
}

static int mkdirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) < 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    }
    return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int main(int argc, char **argv) {
    const char *spool = NULL, *host = "localhost", *job = NULL, *task = "undefined", *slots = "1";
    char *prolog = NULL, *starter = NULL, *epilog = NULL;
    int keep = 0, i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (i + 1 >= argc && strcmp(argv[i], "--keep") != 0) { fprintf(stderr, "execd-stub: %s needs a value\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--spool")) spool = argv[++i];
        else if (!strcmp(argv[i], "--host")) host = argv[++i];
        else if (!strcmp(argv[i], "--job")) job = argv[++i];
        else if (!strcmp(argv[i], "--task")) task = argv[++i];
        else if (!strcmp(argv[i], "--slots")) slots = argv[++i];
        else if (!strcmp(argv[i], "--prolog")) prolog = argv[++i];
        else if (!strcmp(argv[i], "--starter")) starter = argv[++i];
        else if (!strcmp(argv[i], "--epilog")) epilog = argv[++i];
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else { fprintf(stderr, "execd-stub: unknown option %s\n", argv[i]); return 2; }
    }
    if (!spool || !job || i + 1 >= argc) {
        fprintf(stderr, "usage: execd-stub --spool DIR --host NAME --job ID [options] -- COMMAND...\n");
        return 2;
    }
    char **command = argv + i + 1;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s/active_jobs/%s.%s", spool, host, job,
             strcmp(task, "undefined") ? task : "1"); /* task 1 for a non-array job */
    if (mkdirs(dir) < 0) { fprintf(stderr, "execd-stub: cannot create %s: %s\n", dir, strerror(errno)); return 1; }
    /* The job's environment: the user's (ours), then what execd adds. */
    setenv("JOB_ID", job, 1);
    setenv("SGE_TASK_ID", task, 1);
    setenv("NSLOTS", slots, 1);
    setenv("NHOSTS", "1", 1);
    setenv("SGE_JOB_SPOOL_DIR", dir, 1);
    char file[4200];
    snprintf(file, sizeof file, "%s/environment", dir);
    FILE *f = fopen(file, "w");
    if (!f) { fprintf(stderr, "execd-stub: cannot write %s\n", file); return 1; }
    for (char **e = environ; *e; e++) fprintf(f, "%s\n", *e);
    fclose(f);

    char *args[256];
    if (prolog) {
        split(prolog, args, 256, NULL);
        int rc = run("prolog", args);
        if (rc == 99) { fprintf(stderr, "execd-stub: prolog asked to reschedule the job\n"); return 99; }
        if (rc == 100) { fprintf(stderr, "execd-stub: prolog put the job in error state\n"); return 100; }
        if (rc != 0) { fprintf(stderr, "execd-stub: prolog failed with %d\n", rc); return 1; }
    }
    int status;
    if (starter) {
        split(starter, args, 256, command);
        status = run("starter", args);
    } else {
        status = run("job", command);
    }
    if (epilog) {
        split(epilog, args, 256, NULL);
        int rc = run("epilog", args);
        if (rc != 0) fprintf(stderr, "execd-stub: epilog failed with %d\n", rc);
    }
    if (!keep) {
        char rm[4300];
        snprintf(rm, sizeof rm, "%s/rsmap.env", dir);
        unlink(rm);
        unlink(file);
        rmdir(dir);
    }
    return status;
}
