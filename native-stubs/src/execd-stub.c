/* execd-stub: runs one job the way sge_execd and its shepherd do, for rsmapd's integration tests: the spool
 * directory with config, environment and pe_hostfile, the job's tmpdir, then prolog, starter_method + job,
 * epilog - each loading the job's environment file, each as the user execd would run it as - and execd's
 * meaning of their exit codes (sge_conf(5)). Usage:
 *   execd-stub --spool DIR --job ID [--host NAME] [--task N] [--slots N] [--user NAME] [--queue NAME]
 *              [--pe NAME] [--cwd DIR] [--tmpdir DIR] [--shell PATH] [--script] [--prolog [USER@]CMD]
 *              [--starter PATH] [--epilog [USER@]CMD] [--pe-task ID] [--keep] -- COMMAND [ARG...]
 *
 * Layout, as execd writes it (source/daemons/execd/exec_job.cc):
 *   DIR/HOST/active_jobs/JOB.TASK/   (TASK 1 for a non-array job) config, environment, pe_hostfile
 *   DIR/HOST/job_scripts/JOB         the job script, with --script
 *   TMPDIR/JOB.TASK.QUEUE/           $TMPDIR, owned by the job's owner (--tmpdir, default /tmp)
 * The environment file is the user's environment (here: the stub's own, as with qsub -V), then what execd
 * adds - PATH with $TMPDIR first, HOME, SHELL, USER, LOGNAME from the owner's passwd entry, JOB_NAME,
 * JOB_SCRIPT, REQUEST, HOSTNAME, QUEUE, JOB_ID, NQUEUES, NSLOTS, NHOSTS, RESTARTED, TMPDIR, TMP, PE,
 * PE_HOSTFILE, then the SGE_ ones: SGE_CELL, SGE_TASK_ID/FIRST/LAST/STEPSIZE ("undefined" for a non-array
 * job; --task N stands for an array job of the one task N), SGE_ACCOUNT, SGE_JOB_SPOOL_DIR - one NAME=value a line, a newline in a value written as \n. A
 * variable execd sets replaces the user's of the same name in place. Each step starts with exactly that
 * environment, which holds the stub's own: the real execd keeps its start-up environment under the file's
 * (execd_params INHERIT_ENV, true by default on both releases), and the stub's environment stands for both. The starter_method additionally
 * sees SGE_STARTER_SHELL_PATH, SGE_STARTER_SHELL_START_MODE (posix_compliant) and
 * SGE_STARTER_USE_LOGIN_SHELL (true for a shell among the default login_shells, as both releases set it).
 *
 * Users: the job belongs to --user (default: whoever runs the stub; another user needs root). Prolog and
 * epilog run as the job's owner, or as USER with a "USER@" prefix (root@/path, as in qconf); the
 * starter_method and the job always run as the owner (setgid, initgroups, setuid), in --cwd (default: the
 * stub's directory, like qsub -cwd), stdin from /dev/null, in a session of their own.
 *
 * Commands: a prolog or epilog is a path and arguments separated by blanks; the starter_method is one path
 * (execd passes it no arguments), run as argv[0] = its base name, then the job's script or command and
 * arguments. Without --script the job is a binary run as given (qsub -b y -shell no); with --script
 * COMMAND is a script file copied into job_scripts and run by --shell (default /bin/sh), as with
 * shell_start_mode posix_compliant.
 *
 * --pe-task ID: a task of a running parallel job, as Son of Grid Engine 8.1.9's execd starts one for
 * "qrsh -inherit" with the builtin rsh (tried on the real release): its spool directory is
 * JOB.TASK/ID.HOST inside the job's (its config names it in pe_task_id; a host that is not the job's master
 * host has no files of the job's own, only the tasks' directories), no prolog and no epilog run, and the starter_method gets the task's
 * command line as ONE argument (COMMAND and its arguments joined by blanks, also in QRSH_COMMAND) with
 * SGE_STARTER_SHELL_PATH empty and SGE_STARTER_SHELL_START_MODE unix_behavior; without a starter_method
 * the owner's login shell runs it with -c.
 *
 * Exit: 99 / 100 when the prolog asks to reschedule / to put the job in error state (the job and the
 * epilog do not run); 1 when a prolog or epilog exits with anything else (execd puts the queue in error
 * state) or the stub cannot set the job up; 2 for a usage error; otherwise the job's exit status (128 +
 * signal), or the epilog's 99 / 100 if the job exited 0. Each meaning is printed on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stub-files.h" /* the environment file and the file trees */

extern char **environ;

/* The owner's passwd entry, copied: getpwnam's buffer does not survive the next lookup. */
struct owner {
    char name[256], dir[4096], shell[4096];
    uid_t uid;
    gid_t gid;
};

static int lookup(const char *name, struct owner *o) {
    struct passwd *pw = getpwnam(name);
    if (!pw) return -1;
    snprintf(o->name, sizeof o->name, "%s", pw->pw_name);
    snprintf(o->dir, sizeof o->dir, "%s", pw->pw_dir);
    snprintf(o->shell, sizeof o->shell, "%s", pw->pw_shell);
    o->uid = pw->pw_uid;
    o->gid = pw->pw_gid;
    return 0;
}

/* Becomes `o` for good, as the shepherd does before it execs a step; a no-op when we already are `o`. */
static int become(const struct owner *o) {
    if (getuid() == o->uid && geteuid() == o->uid) return 0;
    if (setgid(o->gid) < 0 || initgroups(o->name, o->gid) < 0 || setuid(o->uid) < 0) return -1;
    if (o->uid != 0 && setuid(0) == 0) return -1; /* the switch must not be reversible */
    return 0;
}


/* One step: fork, become its user, load the job's environment, chdir, exec. Returns the exit status. */
struct step {
    const char *what;      /* "prolog", "starter_method", "job", "epilog" */
    const struct owner *as;
    const char *path;      /* what is executed (PATH searched) */
    char **argv;
    const char *environment, *cwd, *starter_shell;
    const char *starter_mode; /* SGE_STARTER_SHELL_START_MODE; NULL: posix_compliant */
};

static int run(const struct step *s) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 127; }
    if (pid == 0) {
        setsid();
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) { dup2(null, 0); if (null > 0) close(null); }
        if (become(s->as) < 0) {
            fprintf(stderr, "execd-stub: cannot run the %s as %s: %s\n", s->what, s->as->name, strerror(errno));
            _exit(127);
        }
        if (load_environment(s->environment) < 0) {
            fprintf(stderr, "execd-stub: cannot read %s: %s\n", s->environment, strerror(errno));
            _exit(127);
        }
        if (s->starter_shell) { /* what the shepherd tells a starter_method */
            setenv("SGE_STARTER_SHELL_PATH", s->starter_shell, 1);
            setenv("SGE_STARTER_SHELL_START_MODE", s->starter_mode ? s->starter_mode : "posix_compliant", 1);
            /* true where the shell is one of the default login_shells (sh,bash,ksh,csh,tcsh), as both real
             * releases set it for a job script; false for a pe task (no shell) */
            const char *b = strrchr(s->starter_shell, '/') ? strrchr(s->starter_shell, '/') + 1 : s->starter_shell;
            int login = !strcmp(b, "sh") || !strcmp(b, "bash") || !strcmp(b, "ksh") || !strcmp(b, "csh") ||
                        !strcmp(b, "tcsh");
            setenv("SGE_STARTER_USE_LOGIN_SHELL", login ? "true" : "false", 1);
        }
        if (chdir(s->cwd) < 0) {
            fprintf(stderr, "execd-stub: %s: cannot chdir to %s: %s\n", s->what, s->cwd, strerror(errno));
            _exit(127);
        }
        execvp(s->path, s->argv);
        fprintf(stderr, "execd-stub: cannot run %s %s: %s\n", s->what, s->path, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) { perror("waitpid"); return 127; }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* "[user@]path arg arg" as the shepherd reads a prolog or epilog (parse_script_params): an '@' before the
 * first blank names the user. Splits in place into argv; returns the user or NULL. */
static char *split_procedure(char *cmd, char **argv, int max) {
    char *user = NULL, *s = strpbrk(cmd, "@ ");
    if (s && *s == '@') {
        *s = '\0';
        user = cmd;
        cmd = s + 1;
    }
    int n = 0;
    for (char *t = strtok(cmd, " "); t && n < max - 1; t = strtok(NULL, " ")) argv[n++] = t;
    if (n == 0) argv[n++] = (char *)""; /* an empty command: exec says what is wrong with it */
    argv[n] = NULL;
    return user;
}

/* A prolog's or epilog's exit code as execd reads it. Returns 0 to go on, else the stub's exit code. */
static int procedure_verdict(const char *what, int rc) {
    if (rc == 0) return 0;
    if (rc == 99) fprintf(stderr, "execd-stub: %s asked to reschedule the job\n", what);
    else if (rc == 100) fprintf(stderr, "execd-stub: %s put the job in error state\n", what);
    else fprintf(stderr, "execd-stub: %s exited %d: execd puts the queue in error state\n", what, rc);
    return rc == 99 || rc == 100 ? rc : 1;
}

static int procedure_owner(const char *what, const char *user, const struct owner *job_owner, struct owner *out) {
    if (!user) { *out = *job_owner; return 0; }
    if (lookup(user, out) < 0) { fprintf(stderr, "execd-stub: %s: no user %s\n", what, user); return -1; }
    return 0;
}

int main(int argc, char **argv) {
    const char *spool = NULL, *host = "localhost", *job = NULL, *task = "undefined", *slots = "1";
    const char *user = NULL, *queue = "all.q", *pe = NULL, *cwd = NULL, *tmpbase = "/tmp", *shell = "/bin/sh";
    char *prolog = NULL, *starter = NULL, *epilog = NULL;
    const char *pe_task = NULL;
    int keep = 0, script = 0, i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--keep")) { keep = 1; continue; }
        if (!strcmp(argv[i], "--script")) { script = 1; continue; }
        if (i + 1 >= argc) { fprintf(stderr, "execd-stub: %s needs a value\n", argv[i]); return 2; }
        const char *o = argv[i++];
        if (!strcmp(o, "--spool")) spool = argv[i];
        else if (!strcmp(o, "--host")) host = argv[i];
        else if (!strcmp(o, "--job")) job = argv[i];
        else if (!strcmp(o, "--task")) task = argv[i];
        else if (!strcmp(o, "--slots")) slots = argv[i];
        else if (!strcmp(o, "--user")) user = argv[i];
        else if (!strcmp(o, "--queue")) queue = argv[i];
        else if (!strcmp(o, "--pe")) pe = argv[i];
        else if (!strcmp(o, "--cwd")) cwd = argv[i];
        else if (!strcmp(o, "--tmpdir")) tmpbase = argv[i];
        else if (!strcmp(o, "--shell")) shell = argv[i];
        else if (!strcmp(o, "--prolog")) prolog = argv[i];
        else if (!strcmp(o, "--starter")) starter = argv[i];
        else if (!strcmp(o, "--epilog")) epilog = argv[i];
        else if (!strcmp(o, "--pe-task")) pe_task = argv[i];
        else { fprintf(stderr, "execd-stub: unknown option %s\n", o); return 2; }
    }
    if (!spool || !job || i + 1 >= argc) {
        fprintf(stderr, "usage: execd-stub --spool DIR --job ID [options] -- COMMAND [ARG...]\n");
        return 2;
    }
    char **command = argv + i + 1;
    int array = strcmp(task, "undefined") != 0;
    const char *task_dir = array ? task : "1"; /* task 1 for a non-array job */

    struct owner owner;
    if (!user) {
        struct passwd *me = getpwuid(getuid());
        user = me ? me->pw_name : "";
    }
    if (lookup(user, &owner) < 0) { fprintf(stderr, "execd-stub: no user %s\n", user); return 2; }
    if (geteuid() != 0 && owner.uid != geteuid()) {
        fprintf(stderr, "execd-stub: --user %s needs root (execd runs as root)\n", user);
        return 2;
    }
    char here[4096];
    if (!cwd) cwd = getcwd(here, sizeof here) ? here : "/";

    /* The spool directory (sge_get_active_job_file_path) and the job's tmpdir (sge_make_tmpdir). */
    char hostdir[4096], dir[4200], tmpdir[4200], scripts[4200], script_file[4300], file[4400];
    snprintf(hostdir, sizeof hostdir, "%s/%s", spool, host);
    snprintf(dir, sizeof dir, "%s/active_jobs/%s.%s", hostdir, job, task_dir);
    if (pe_task) { /* inside the job's own directory, named after the task and the host */
        size_t used = strlen(dir);
        snprintf(dir + used, sizeof dir - used, "/%s.%s", pe_task, host);
        prolog = epilog = NULL; /* execd runs neither for a pe task */
    }
    char line[8192] = ""; /* a pe task's command line: COMMAND and its arguments joined by blanks */
    for (char **a = argv + i + 1; pe_task && *a; a++) {
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s", used ? " " : "", *a);
    }
    snprintf(scripts, sizeof scripts, "%s/job_scripts", hostdir);
    snprintf(tmpdir, sizeof tmpdir, "%s/%s.%s.%s", tmpbase, job, task_dir, queue);
    if (mkdirs(dir, 0755) < 0 || mkdirs(tmpdir, 0755) < 0 || chown(tmpdir, owner.uid, owner.gid) < 0) {
        fprintf(stderr, "execd-stub: cannot create %s or %s: %s\n", dir, tmpdir, strerror(errno));
        return 1;
    }
    snprintf(script_file, sizeof script_file, "%s", command[0]);
    if (script) {
        snprintf(script_file, sizeof script_file, "%s/%s", scripts, job);
        if (mkdirs(scripts, 0755) < 0 || copy_file(command[0], script_file, 0755) < 0) {
            fprintf(stderr, "execd-stub: cannot spool the job script %s: %s\n", command[0], strerror(errno));
            return 1;
        }
    }
    const char *name = strrchr(command[0], '/') ? strrchr(command[0], '/') + 1 : command[0];

    /* pe_hostfile: written for every job, "host slots queue processors"; not for a pe task (exec_job.cc). */
    snprintf(file, sizeof file, "%s/pe_hostfile", dir);
    FILE *f = pe_task ? NULL : fopen(file, "w");
    if (!pe_task && (!f || fprintf(f, "%s %s %s@%s UNDEFINED\n", host, slots, queue, host) < 0 || fclose(f) != 0)) {
        fprintf(stderr, "execd-stub: cannot write %s\n", file);
        return 1;
    }

    /* The environment file, in execd's order. */
    for (char **e = environ; *e; e++) {
        char *eq = strchr(*e, '=');
        if (!eq || eq == *e) continue;
        char n[1024];
        snprintf(n, sizeof n, "%.*s", (int)(eq - *e), *e);
        set(n, eq + 1);
    }
    char path[8192];
    const char *user_path = getenv("PATH");
    snprintf(path, sizeof path, "%s:%s", tmpdir, user_path ? user_path : "/usr/local/bin:/bin:/usr/bin");
    set("PATH", path);
    set("REQNAME", name);
    set("HOME", owner.dir);
    set("SHELL", owner.shell);
    set("USER", owner.name);
    set("LOGNAME", owner.name);
    set("JOB_NAME", name);
    set("JOB_SCRIPT", script_file);
    set("REQUEST", name);
    set("HOSTNAME", host);
    set("QUEUE", queue);
    set("JOB_ID", job);
    set("ENVIRONMENT", "BATCH");
    set_int("NQUEUES", 1);
    set("NSLOTS", slots);
    set_int("NHOSTS", 1);
    set_int("RESTARTED", 0);
    set("TMPDIR", tmpdir);
    set("TMP", tmpdir);
    set("SHELL", shell);
    snprintf(file, sizeof file, "%s/pe_hostfile", dir);
    if (pe) {
        set("PE", pe);
        set("PE_HOSTFILE", file);
    }
    /* execd sets these through its prefix list, so they come last and always win over the user's */
    set("SGE_CELL", "default");
    set("SGE_TASK_ID", task);
    set("SGE_TASK_FIRST", task);
    set("SGE_TASK_LAST", task);
    set("SGE_TASK_STEPSIZE", array ? "1" : "undefined");
    set("SGE_ACCOUNT", "sge");
    set("SGE_JOB_SPOOL_DIR", dir);
    if (pe_task) set("QRSH_COMMAND", line);
    char environment[4400];
    snprintf(environment, sizeof environment, "%s/environment", dir);
    if (write_environment(environment) != 0) {
        fprintf(stderr, "execd-stub: cannot write %s\n", environment);
        return 1;
    }

    /* The config file: what the shepherd reads (the part a hook may look at). */
    snprintf(file, sizeof file, "%s/config", dir);
    f = fopen(file, "w");
    if (!f) { fprintf(stderr, "execd-stub: cannot write %s\n", file); return 1; }
    fprintf(f, "job_owner=%s\njob_id=%s\nja_task_id=%s\njob_name=%s\nqueue=%s\nhost=%s\naccount=sge\n", owner.name, job,
            array ? task : "0", name, queue, host);
    fprintf(f, "cwd=%s\ntmpdir=%s\nstdin_path=/dev/null\nshell_path=%s\nscript_file=%s\n", cwd, tmpdir, shell,
            script_file);
    fprintf(f, "handle_as_binary=%d\nno_shell=%d\nshell_start_mode=posix_compliant\nuse_login_shell=0\n", !script, !script);
    fprintf(f, "prolog=%s\nepilog=%s\nstarter_method=%s\n", prolog ? prolog : "none", epilog ? epilog : "none",
            starter ? starter : "none");
    fprintf(f, "pe=%s\npe_slots=%s\nhost_slots=%s\nenable_systemd=0\n", pe ? pe : "none", slots, slots);
    if (pe_task) fprintf(f, "pe_task_id=%s.%s\n", pe_task, host); /* the task's directory name, as execd writes it */
    int nargs = 0;
    for (char **a = command + 1; *a; a++) nargs++;
    fprintf(f, "njob_args=%d\n", nargs);
    for (int a = 0; a < nargs; a++) fprintf(f, "job_arg%d=%s\n", a + 1, command[a + 1]);
    if (fclose(f) != 0) { fprintf(stderr, "execd-stub: cannot write %s\n", file); return 1; }

    char *args[256];
    int status = 0, verdict;
    struct owner as;
    if (prolog) {
        char *who = split_procedure(prolog, args, 256);
        if (procedure_owner("prolog", who, &owner, &as) < 0) return 1;
        struct step s = { "prolog", &as, args[0], args, environment, cwd, NULL, NULL };
        if ((verdict = procedure_verdict("prolog", run(&s))) != 0) {
            if (!keep) { remove_tree(dir); remove_tree(tmpdir); if (script) unlink(script_file); }
            return verdict;
        }
    }
    /* The job: script or command, then its arguments; a starter_method gets them after its own name. */
    char *job_argv[260];
    int n = 0;
    const char *exe = starter ? starter : script ? shell : script_file;
    if (starter) job_argv[n++] = strrchr(starter, '/') ? strrchr(starter, '/') + 1 : starter;
    else if (pe_task) { exe = owner.shell; job_argv[n++] = owner.shell; job_argv[n++] = (char *)"-c"; }
    else if (script) job_argv[n++] = (char *)shell;
    if (pe_task) {
        job_argv[n++] = line;
    } else {
        job_argv[n++] = script_file;
        for (char **a = command + 1; *a && n < 259; a++) job_argv[n++] = *a;
    }
    job_argv[n] = NULL;
    struct step j = { starter ? "starter_method" : "job", &owner, exe, job_argv, environment, cwd,
                      starter ? pe_task ? "" : shell : NULL, pe_task ? "unix_behavior" : NULL };
    status = run(&j);
    if (status == 99) fprintf(stderr, "execd-stub: the job exited 99: execd reschedules it\n");
    if (status == 100) fprintf(stderr, "execd-stub: the job exited 100: execd puts it in error state\n");
    if (epilog) {
        char *who = split_procedure(epilog, args, 256);
        if (procedure_owner("epilog", who, &owner, &as) < 0) return 1;
        struct step s = { "epilog", &as, args[0], args, environment, cwd, NULL, NULL };
        verdict = procedure_verdict("epilog", run(&s));
        if (status == 0) status = verdict;
    }
    if (!keep) {
        remove_tree(dir);
        remove_tree(tmpdir);
        if (script) unlink(script_file);
    }
    return status;
}
