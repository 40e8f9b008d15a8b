/* shell-stub: plays a Flux-style job shell for rsmapd's integration tests (Flux RFC 51): it sends a
 * realloc in the jobspec form (spec_add / spec_sub) or a release of an R, as the shell's alloc plugin would
 * forward them, and prints rsmapd's answer whole. Usage:
 *   shell-stub realloc [--spec-add FILE] [--spec-sub FILE] [--tag T] [--job J]   (at least one --spec-*)
 *   shell-stub release [--R FILE] [--job J]
 *
 * realloc  REALLOC {"job","task"?,"tag"?,"spec_add"?,"spec_sub"?} - each spec the FILE's bytes verbatim, as
 *          raw JSON (an RFC 25 jobspec object; not checked here, rsmapd judges it); waits for the ALLOC event
 *          (no timeout) and prints its JSON argument on one line (R_delta_add / R_delta_sub on SUCCESS), then
 *          "type=N". Exit 0 on type 0 (SUCCESS), 3 on any other type.
 * release  RELEASE {"job","task"?,"R"?} - R the FILE's bytes verbatim (an RFC 20 R object); without --R,
 *          everything taken away from the job. Prints the STATE event's JSON on one line; exit 0.
 * Both: ERROR from rsmapd, or a usage error: one line on stderr, exit 2. No rsmapd at the socket, a lost
 * connection or an answer against the protocol: exit 1.
 *
 * The job: --job J, else $JOB_ID (with "." $SGE_TASK_ID when that is a number), else $SLURM_JOB_ID; a
 * J of "7.3" is sent as {"job":"7","task":"3"}. The socket: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock.
 * A stand-in for tests: it believes whoever serves the socket (no SO_PEERCRED check, unlike rsmap-shell);
 * the frames are bridge's rsmap-client.c, compiled in by this module's pom. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rsmap-client.h"

enum { EXIT_DONE = 0, EXIT_NO_DAEMON = 1, EXIT_USAGE = 2, EXIT_NOT_SUCCESS = 3 };
enum { FILE_MAX = RSMAP_MAX_FRAME };

static int usage(const char *why) {
    fprintf(stderr, "shell-stub: %s\n"
                    "usage: shell-stub realloc [--spec-add FILE] [--spec-sub FILE] [--tag T] [--job J]\n"
                    "       shell-stub release [--R FILE] [--job J]\n", why);
    return EXIT_USAGE;
}

/* The whole file, NUL-terminated, or NULL with a line on stderr. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "shell-stub: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(FILE_MAX + 1);
    size_t n = text ? fread(text, 1, FILE_MAX + 1, f) : 0;
    int bad = !text || ferror(f) || n > FILE_MAX;
    fclose(f);
    if (bad) {
        fprintf(stderr, "shell-stub: cannot read %s whole (at most %d bytes)\n", path, FILE_MAX);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* `"key":"value"` with the value escaped, after a comma unless it opens the object. */
static int string_member(char *out, size_t cap, size_t *len, const char *key, const char *value) {
    char body[1024];
    if (rsmap_json_string(body, sizeof body, value) < 0) return -1;
    int n = snprintf(out + *len, cap - *len, "%s\"%s\":\"%s\"", *len > 1 ? "," : "", key, body);
    if (n < 0 || (size_t)n >= cap - *len) return -1;
    *len += (size_t)n;
    return 0;
}

static int raw_member(char *out, size_t cap, size_t *len, const char *key, const char *json) {
    int n = snprintf(out + *len, cap - *len, ",\"%s\":%s", key, json);
    if (n < 0 || (size_t)n >= cap - *len) return -1;
    *len += (size_t)n;
    return 0;
}

/* The job's members, as rsmap-shell sends them. */
static int job_members(char *out, size_t cap, size_t *len, const char *job) {
    const char *dot = strrchr(job, '.');
    if (dot && dot != job && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(dot - job), job);
        return string_member(out, cap, len, "job", name) || string_member(out, cap, len, "task", dot + 1) ? -1 : 0;
    }
    return string_member(out, cap, len, "job", job);
}

static int connect_socket(void) {
    const char *path = getenv("RSMAP_SOCKET");
    if (!path || !*path) path = "/run/rsmap/rsmapd.sock";
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    int fd = -1;
    errno = ENAMETOOLONG;
    if (strlen(path) < sizeof a.sun_path) {
        strcpy(a.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
    }
    fprintf(stderr, "shell-stub: cannot reach rsmapd at %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
}

/* The first event of the awaited code, its arguments copied. */
struct answer {
    unsigned want;
    int argc, events;
    char *json, *type;
};

static int keep(void *ctx, unsigned code, int argc, char *const *argv) {
    struct answer *a = ctx;
    if (code != a->want) return 0;
    if (a->events++ > 0) return 1;
    a->argc = argc;
    a->json = strdup(argc > 0 ? argv[0] : "");
    a->type = strdup(argc > 1 ? argv[1] : "");
    return !a->json || !a->type;
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "realloc") && strcmp(argv[1], "release"))) return usage("realloc or release?");
    int realloc_ = !strcmp(argv[1], "realloc");
    const char *spec_add = NULL, *spec_sub = NULL, *r_file = NULL, *tag = NULL, *job = NULL;
    for (int i = 2; i < argc; i++) {
        const char **slot = NULL;
        if (realloc_ && !strcmp(argv[i], "--spec-add")) slot = &spec_add;
        else if (realloc_ && !strcmp(argv[i], "--spec-sub")) slot = &spec_sub;
        else if (realloc_ && !strcmp(argv[i], "--tag")) slot = &tag;
        else if (!realloc_ && !strcmp(argv[i], "--R")) slot = &r_file;
        else if (!strcmp(argv[i], "--job")) slot = &job;
        if (!slot || i + 1 >= argc) return usage(slot ? "an option without its value" : "unknown argument");
        *slot = argv[++i];
    }
    if (realloc_ && !spec_add && !spec_sub) return usage("realloc needs --spec-add or --spec-sub");
    char from_env[512];
    if (!job) {
        const char *id = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID"), *slurm = getenv("SLURM_JOB_ID");
        int numbered = task && *task && strspn(task, "0123456789") == strlen(task);
        if (id && *id) snprintf(from_env, sizeof from_env, "%s%s%s", id, numbered ? "." : "", numbered ? task : "");
        else if (slurm && *slurm) snprintf(from_env, sizeof from_env, "%s", slurm);
        else return usage("no job: --job, JOB_ID or SLURM_JOB_ID");
        job = from_env;
    }

    char *add = spec_add ? slurp(spec_add) : NULL, *sub = spec_sub ? slurp(spec_sub) : NULL;
    char *r = r_file ? slurp(r_file) : NULL;
    if ((spec_add && !add) || (spec_sub && !sub) || (r_file && !r)) return EXIT_USAGE;
    size_t cap = 4096 + (add ? strlen(add) : 0) + (sub ? strlen(sub) : 0) + (r ? strlen(r) : 0), len = 1;
    char *arg = malloc(cap);
    if (!arg) return EXIT_USAGE;
    arg[0] = '{';
    if (job_members(arg, cap, &len, job) < 0 || (tag && string_member(arg, cap, &len, "tag", tag) < 0) ||
        (add && raw_member(arg, cap, &len, "spec_add", add) < 0) ||
        (sub && raw_member(arg, cap, &len, "spec_sub", sub) < 0) || (r && raw_member(arg, cap, &len, "R", r) < 0) ||
        len + 2 > cap) {
        return usage("the job or the tag is too long");
    }
    arg[len++] = '}';
    arg[len] = '\0';

    int fd = connect_socket();
    if (fd < 0) return EXIT_NO_DAEMON;
    const char *version[] = { "1" }, *args[] = { arg };
    char why[4096] = "";
    struct answer a = { .want = realloc_ ? RSMAP_ALLOC : RSMAP_STATE };
    int code = -1;
    if (rsmap_send(fd, 1, RSMAP_INIT, 1, version) == 0 && rsmap_send(fd, 2, realloc_ ? RSMAP_REALLOC : RSMAP_RELEASE, 1, args) == 0) {
        code = rsmap_finish(fd, 1, NULL, NULL, why, sizeof why);
        if (code == RSMAP_OK) code = rsmap_finish_events(fd, 2, keep, &a, why, sizeof why);
    }
    close(fd);
    if (code == RSMAP_ERROR) {
        fprintf(stderr, "shell-stub: ERROR: %s\n", why);
        return EXIT_USAGE;
    }
    if (code != RSMAP_OK || a.events != 1) {
        fprintf(stderr, "shell-stub: no answer: %s\n", code != RSMAP_OK ? "lost rsmapd" : "not exactly one awaited event before OK");
        return EXIT_NO_DAEMON;
    }
    printf("%s\n", a.json);
    if (realloc_) printf("type=%s\n", a.type);
    fflush(stdout);
    return !realloc_ || !strcmp(a.type, "0") ? EXIT_DONE : EXIT_NOT_SUCCESS;
}
