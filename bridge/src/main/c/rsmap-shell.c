/* rsmap-shell: what a running job runs to grow or shrink its resource-map grant (issue 13; Flux RFC 51's
 * realloc, release and realloc_cancel, as a job shell would send them) - a small static client of rsmapd's
 * agent protocol (docs/protocol.md, "Dynamic reallocation"), so that no JVM starts in a job.
 *
 *   rsmap-shell realloc [--add REQ] [--sub REQ] [--ids JSON] [--tag TAG] [--job J]
 *   rsmap-shell release [--ids JSON] [--job J]
 *   rsmap-shell cancel TAG [--job J]
 *   rsmap-shell status [--job J]
 *
 * Exit codes, for job scripts:
 *   0  done: realloc SUCCESS and release print the job's NAME=value lines (SGE_HGR_<map>=ids) on stdout;
 *      status prints the job's STATE JSON on one line; cancel prints nothing
 *   1  no answer from a trusted rsmapd: unreachable, not trusted (rsmap_check_server), lost, refused INIT
 *      (another protocol version), or an answer that does not follow the protocol
 *   2  bad usage, or rsmapd answered ERROR (malformed, not the job's owner, nothing to release, ...)
 *   3  the realloc was decided against: DENY, CANCEL or UNSUPPORTED (RFC 51's types 1-3); also a realloc
 *      interrupted by SIGINT or SIGTERM ("cancelled": the connection closing cancels it in rsmapd)
 * Each failure is one line on stderr. A realloc may wait for minutes until rsmapd can decide: there is no
 * timeout on its answer, only on a lost connection.
 *
 * Installed set-group-ID rsmap next to rsmap-hook (packaging), it reaches a 0660 socket as the job's owner
 * and drops the group as soon as it is connected: rsmapd authorises every command by the peer's uid. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsmap-client.h"

enum { EXIT_DONE = 0, EXIT_NO_DAEMON = 1, EXIT_USAGE = 2, EXIT_DECIDED_AGAINST = 3 };
enum { TID_INIT = 1, TID_COMMAND = 2 };
/* RFC 51's answer types, in ALLOC's second argument */
static const char *const TYPES[] = { "SUCCESS", "DENY", "CANCEL", "UNSUPPORTED" };

static const char USAGE[] =
    "usage: rsmap-shell realloc [--add REQ] [--sub REQ] [--ids JSON] [--tag TAG] [--job J]\n"
    "       rsmap-shell release [--ids JSON] [--job J]\n"
    "       rsmap-shell cancel TAG [--job J]\n"
    "       rsmap-shell status [--job J]\n"
    "\n"
    "Asks rsmapd, from inside a running job, for more or fewer resource-map instances (Flux RFC 51).\n"
    "  realloc   --add REQ adds what the request REQ asks for (e.g. 'gpu=1[same=id]'); --sub REQ takes\n"
    "            away what it names, --ids the exact instances ({\"host\":{\"map\":[\"id\",...]}}). Waits until\n"
    "            rsmapd decides; on SUCCESS prints the job's SGE_HGR_<map>=ids lines. --tag names the\n"
    "            realloc for cancel (1-64 of A-Z a-z 0-9 _ . : @ -).\n"
    "  release   gives back instances taken away by a realloc (--ids: only those; default: all of them)\n"
    "            once the job stopped using them; prints the job's SGE_HGR_<map>=ids lines.\n"
    "  cancel    answers the waiting realloc tagged TAG with CANCEL.\n"
    "  status    prints the job as rsmapd holds it (JSON, one line).\n"
    "The job: --job J, else $JOB_ID (with .$SGE_TASK_ID for an array task), else $SLURM_JOB_ID.\n"
    "The socket: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock.\n"
    "Exit: 0 done; 1 rsmapd unreachable, not trusted or lost; 2 usage or rsmapd's ERROR;\n"
    "3 realloc DENY, CANCEL, UNSUPPORTED, or interrupted.\n";

/* One line on stderr, exit 2. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("rsmap-shell: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (rsmap-shell --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* --- the command's JSON argument ------------------------------------------------------------------------- */

/* A growing string; `failed` once memory ran out (checked once, at the end). */
struct text {
    char *s;
    size_t len, cap;
    int failed;
};

static void put(struct text *t, const char *s, size_t n) {
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void puts_(struct text *t, const char *s) {
    put(t, s, strlen(s));
}

/* ,"key":"value" (the first member without the comma), the value escaped by rsmap_json_string. */
static void member_string(struct text *t, const char *key, const char *value) {
    size_t cap = 6 * strlen(value) + 8; /* \u00XX is the longest escape, 6 bytes for one */
    char *body = malloc(cap);
    if (!body || rsmap_json_string(body, cap, value) < 0) {
        t->failed = 1;
        free(body);
        return;
    }
    puts_(t, t->len > 1 ? ",\"" : "\"");
    puts_(t, key);
    puts_(t, "\":\"");
    puts_(t, body);
    puts_(t, "\"");
    free(body);
}

/* ,"key":JSON - a value that is JSON already (--ids). */
static void member_raw(struct text *t, const char *key, const char *json) {
    puts_(t, t->len > 1 ? ",\"" : "\"");
    puts_(t, key);
    puts_(t, "\":");
    puts_(t, json);
}

/* Whether --ids is one JSON object, as far as its brackets and strings go: rsmapd parses and validates it
 * (host -> map -> ids), this only keeps a stray quote or brace from turning the command's JSON into another
 * object. NULL, or what is wrong. */
static const char *object_shape(const char *s, char *why, size_t cap) {
    enum { DEPTH = 32 };
    char open[DEPTH];
    int depth = 0, in_string = 0, closed = 0;
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') i++;
    if (s[i] != '{') return "it must start with '{'";
    for (; s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (closed && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            snprintf(why, cap, "'%c' after its end at byte %zu", c, i + 1);
            return why;
        }
        if (c < 0x20 && (in_string || (c != '\t' && c != '\n' && c != '\r'))) {
            snprintf(why, cap, "a control character at byte %zu", i + 1);
            return why;
        }
        if (in_string) {
            if (c == '\\' && s[i + 1]) i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (depth == DEPTH) {
                snprintf(why, cap, "nested deeper than %d at byte %zu", DEPTH, i + 1);
                return why;
            }
            open[depth++] = (char)c;
        } else if (c == '}' || c == ']') {
            if (open[depth - 1] != (c == '}' ? '{' : '[')) {
                snprintf(why, cap, "'%c' closes '%c' at byte %zu", c, open[depth - 1], i + 1);
                return why;
            }
            closed = --depth == 0;
        }
    }
    if (in_string) return "a string is not closed";
    if (!closed) return "it is not closed";
    return NULL;
}

/* The tag's grammar (docs/protocol.md, "Dynamic reallocation"): 1-64 characters of [A-Za-z0-9_.:@-]. */
static int valid_tag(const char *tag) {
    size_t n = strlen(tag);
    if (n < 1 || n > 64) return 0;
    return strspn(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-") == n;
}

static int digits(const char *s) {
    return s && *s && strspn(s, "0123456789") == strlen(s);
}

/* The job this runs in: $JOB_ID with "." $SGE_TASK_ID when that is a number (execd sets "undefined" for a
 * job that is not an array), else $SLURM_JOB_ID. Written into out; 0, or -1 when there is none. */
static int job_from_environment(char *out, size_t cap) {
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID"), *slurm = getenv("SLURM_JOB_ID");
    int n;
    if (job && *job) n = digits(task) ? snprintf(out, cap, "%s.%s", job, task) : snprintf(out, cap, "%s", job);
    else if (slurm && *slurm) n = snprintf(out, cap, "%s", slurm);
    else return -1;
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* {"job":"7","task":"3" - rsmapd names task 3 of job 7 "7.3" (docs/protocol.md, "Jobs"), and takes the two
 * apart: J is split at its last dot when a task number follows it; otherwise all of J is the job, and
 * rsmapd judges it. */
static void job_members(struct text *t, const char *job) {
    const char *dot = strrchr(job, '.');
    if (dot && dot != job && digits(dot + 1)) {
        char *name = strndup(job, (size_t)(dot - job));
        if (!name) {
            t->failed = 1;
            return;
        }
        member_string(t, "job", name);
        member_string(t, "task", dot + 1);
        free(name);
    } else {
        member_string(t, "job", job);
    }
}

/* --- the exchange ------------------------------------------------------------------------------------------ */

/* What the command's events said: the first ALLOC or STATE, its arguments copied. */
struct answer {
    unsigned want; /* RSMAP_ALLOC or RSMAP_STATE */
    int argc;
    char **argv;
    const char *unexpected; /* a second answer event: the protocol is not followed */
};

static int keep_answer(void *ctx, unsigned code, int argc, char *const *argv) {
    struct answer *a = ctx;
    if (code != a->want) return 0; /* events this command does not wait for */
    if (a->argv) {
        a->unexpected = code == RSMAP_ALLOC ? "two ALLOC events" : "two STATE events";
        return 1;
    }
    a->argv = calloc((size_t)argc + 1, sizeof *a->argv);
    if (!a->argv) return 1;
    for (int i = 0; i < argc; i++) {
        a->argv[i] = strdup(argv[i]);
        if (!a->argv[i]) return 1;
        a->argc = i + 1;
    }
    return 0;
}

static const char *command_name(unsigned code) {
    switch (code) {
    case RSMAP_REALLOC: return "REALLOC";
    case RSMAP_RELEASE: return "RELEASE";
    case RSMAP_REALLOC_CANCEL: return "REALLOC_CANCEL";
    default: return "QUERY";
    }
}

/* "cancelled" on SIGINT / SIGTERM while a realloc waits: the exit closes the connection, which cancels the
 * realloc in rsmapd. Only async-signal-safe calls. */
static char interrupted[160];
static size_t interrupted_len;

static void on_interrupt(int sig) {
    (void)sig;
    if (write(STDERR_FILENO, interrupted, interrupted_len) < 0) {
        /* nothing left to tell */
    }
    _exit(EXIT_DECIDED_AGAINST);
}

static void exit_on_interrupt(const char *label) {
    int n = snprintf(interrupted, sizeof interrupted, "rsmap-shell: %s: cancelled\n", label);
    interrupted_len = n < 0 ? 0 : (size_t)n < sizeof interrupted ? (size_t)n : sizeof interrupted - 1;
    struct sigaction sa = { .sa_handler = on_interrupt };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* INIT and the command in one round trip (as rsmap-hook does), then the command's events up to its OK or
 * ERROR. `label` opens every message ("realloc t1"). An exit code, or -1 with *answer filled after OK. */
static int exchange(unsigned code, const char *arg, const char *label, struct answer *answer) {
    char why[4096] = "";
    int fd = rsmap_connect(NULL, why, sizeof why); /* $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock; trust-checked */
    if (fd < 0) {
        fprintf(stderr, "rsmap-shell: %s\n", why);
        return EXIT_NO_DAEMON;
    }
    /* Installed set-group-ID rsmap, the group reached the socket; nothing after this needs it. */
    gid_t gid = getgid();
    if (getegid() != gid && setresgid(gid, gid, gid) != 0) {
        fprintf(stderr, "rsmap-shell: cannot drop the rsmap group: %s\n", strerror(errno));
        close(fd);
        return EXIT_NO_DAEMON;
    }
    const char *version[] = { "1" }, *argv[] = { arg };
    int r = -1;
    const char *during = "INIT";
    if (rsmap_send(fd, TID_INIT, RSMAP_INIT, 1, version) == 0 && rsmap_send(fd, TID_COMMAND, code, 1, argv) == 0) {
        r = rsmap_finish(fd, TID_INIT, NULL, NULL, why, sizeof why);
        if (r == RSMAP_OK) {
            during = command_name(code);
            r = rsmap_finish_events(fd, TID_COMMAND, keep_answer, answer, why, sizeof why);
        } else if (r == RSMAP_ERROR) {
            close(fd);
            fprintf(stderr, "rsmap-shell: rsmapd refused INIT: %s\n", why);
            return EXIT_NO_DAEMON;
        }
    }
    close(fd);
    if (r == RSMAP_ERROR) {
        fprintf(stderr, "rsmap-shell: %s: ERROR: %s\n", label, why);
        return EXIT_USAGE;
    }
    if (answer->unexpected) {
        fprintf(stderr, "rsmap-shell: %s: rsmapd answered with %s\n", label, answer->unexpected);
        return EXIT_NO_DAEMON;
    }
    if (r != RSMAP_OK) {
        fprintf(stderr, "rsmap-shell: %s: lost rsmapd during %s\n", label, during);
        return EXIT_NO_DAEMON;
    }
    if (!answer->argv) {
        fprintf(stderr, "rsmap-shell: %s: rsmapd answered OK without %s\n", label,
                answer->want == RSMAP_ALLOC ? "an ALLOC event" : "a STATE event");
        return EXIT_NO_DAEMON;
    }
    return -1;
}

static int written(void) {
    if (fflush(stdout) == 0 && !ferror(stdout)) return EXIT_DONE;
    fprintf(stderr, "rsmap-shell: cannot write the answer: %s\n", strerror(errno));
    return EXIT_USAGE;
}

/* --- the commands ------------------------------------------------------------------------------------------ */

struct options {
    const char *add, *sub, *ids, *tag, *job;
};

/* --name VALUE or --name=VALUE into *slot; 1 when argv[*i] is that option, -1 (message printed) when misused. */
static int option(char **argv, int argc, int *i, const char *name, const char **slot) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] != '\0' && argv[*i][n] != '=')) return 0;
    if (*slot) {
        usage_error("%s is given twice", name);
        return -1;
    }
    if (argv[*i][n] == '=') {
        *slot = argv[*i] + n + 1;
    } else if (*i + 1 < argc) {
        *slot = argv[++*i];
    } else {
        usage_error("%s needs a value", name);
        return -1;
    }
    return 1;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return written();
        }
    }
    if (argc < 2) return usage_error("which command? realloc, release, cancel or status");
    const char *cmd = argv[1];
    int realloc_ = !strcmp(cmd, "realloc"), release = !strcmp(cmd, "release"), cancel = !strcmp(cmd, "cancel"),
        status = !strcmp(cmd, "status");
    if (!realloc_ && !release && !cancel && !status) return usage_error("unknown command '%s'", cmd);

    struct options o = { 0 };
    const char *positional = NULL;
    for (int i = 2; i < argc; i++) {
        int r = 0;
        if (realloc_ && !r) r = option(argv, argc, &i, "--add", &o.add);
        if (realloc_ && !r) r = option(argv, argc, &i, "--sub", &o.sub);
        if (realloc_ && !r) r = option(argv, argc, &i, "--tag", &o.tag);
        if ((realloc_ || release) && !r) r = option(argv, argc, &i, "--ids", &o.ids);
        if (!r) r = option(argv, argc, &i, "--job", &o.job);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0') return usage_error("%s takes no option %s", cmd, argv[i]);
        if (!cancel || positional) return usage_error("%s takes no argument '%s'", cmd, argv[i]);
        positional = argv[i];
    }
    if (cancel) {
        if (!positional) return usage_error("cancel needs the TAG of the realloc");
        o.tag = positional;
    }
    if (realloc_ && !o.add && !o.sub && !o.ids) return usage_error("realloc needs --add, --sub or --ids");
    if (o.tag && !valid_tag(o.tag)) return usage_error("tag '%s' is not 1-64 characters of A-Z a-z 0-9 _ . : @ -", o.tag);
    char why[128];
    const char *bad = o.ids ? object_shape(o.ids, why, sizeof why) : NULL;
    if (bad) return usage_error("--ids is not a JSON object: %s", bad);
    char job[512];
    if (o.job) {
        if (!*o.job || strlen(o.job) >= sizeof job) return usage_error("--job is empty or longer than %zu bytes", sizeof job - 1);
        snprintf(job, sizeof job, "%s", o.job);
    } else if (job_from_environment(job, sizeof job) < 0) {
        return usage_error("no job: JOB_ID and SLURM_JOB_ID are not set (--job J)");
    }

    struct text arg = { 0 };
    puts_(&arg, "{");
    job_members(&arg, job);
    if (o.tag) member_string(&arg, "tag", o.tag);
    if (o.add) member_string(&arg, "add", o.add);
    if (o.sub) member_string(&arg, "sub", o.sub);
    if (o.ids) member_raw(&arg, "ids", o.ids);
    puts_(&arg, "}");
    if (arg.failed) {
        fprintf(stderr, "rsmap-shell: out of memory\n");
        return EXIT_USAGE;
    }
    if (arg.len > RSMAP_MAX_FRAME - 64) return usage_error("the command is longer than a frame (1 MiB)");

    /* The tag rsmapd gives a realloc without one: "tid-" and the command's TID in 8 hex digits. */
    char tag[80], label[128];
    if (realloc_ && !o.tag) snprintf(tag, sizeof tag, "tid-%08x", (unsigned)TID_COMMAND);
    else snprintf(tag, sizeof tag, "%s", o.tag ? o.tag : "");
    snprintf(label, sizeof label, "%s%s%s", cmd, *tag ? " " : "", tag);

    unsigned code = realloc_ ? RSMAP_REALLOC : release ? RSMAP_RELEASE : cancel ? RSMAP_REALLOC_CANCEL : RSMAP_QUERY;
    struct answer a = { .want = realloc_ || cancel ? RSMAP_ALLOC : RSMAP_STATE };
    if (realloc_) exit_on_interrupt(label);
    int r = exchange(code, arg.s, label, &a);
    free(arg.s);
    if (r >= 0) return r;

    if (status) {
        printf("%s\n", a.argc > 0 ? a.argv[0] : "");
        return written();
    }
    if (release) {
        for (int i = 1; i < a.argc; i++) printf("%s\n", a.argv[i]);
        return written();
    }
    if (cancel) return EXIT_DONE; /* the ALLOC of type CANCEL is this command's own receipt */
    /* ALLOC: [0] JSON, [1] the type in decimal, [2] the reason, [3..] the job's NAME=value lines. */
    int type = a.argc >= 3 && strlen(a.argv[1]) == 1 && a.argv[1][0] >= '0' && a.argv[1][0] <= '3' ? a.argv[1][0] - '0' : -1;
    if (type < 0) {
        fprintf(stderr, "rsmap-shell: %s: rsmapd answered an ALLOC without a known type ('%s')\n", label,
                a.argc >= 2 ? a.argv[1] : "");
        return EXIT_NO_DAEMON;
    }
    if (type != 0) {
        fprintf(stderr, "rsmap-shell: %s: %s%s%s\n", label, TYPES[type], *a.argv[2] ? ": " : "", a.argv[2]);
        return EXIT_DECIDED_AGAINST;
    }
    for (int i = 3; i < a.argc; i++) printf("%s\n", a.argv[i]);
    return written();
}
