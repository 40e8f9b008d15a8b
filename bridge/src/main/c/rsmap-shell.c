/* rsmap-shell: what a running job runs to grow or shrink its resource-map grant (issue 13; Flux RFC 51's
 * realloc, release and realloc_cancel, as a job shell would send them) - a small static client of rsmapd's
 * agent protocol (docs/protocol.md, "Dynamic reallocation"), so that no JVM starts in a job.
 *
 *   rsmap-shell realloc [--add REQ] [--sub REQ] [--ids JSON] [--tag TAG] [--timeout S] [--job J]
 *   rsmap-shell release [--ids JSON] [--job J]
 *   rsmap-shell cancel TAG [--job J]
 *   rsmap-shell status [--job J]
 *
 * Exit codes, for job scripts:
 *   0  done: realloc SUCCESS and release print the job's NAME=value lines (SGE_HGR_<map>=ids) on stdout;
 *      status prints the job's STATE JSON on one line; cancel prints nothing
 *   1  no answer from a trusted rsmapd: unreachable, not trusted (rsmap_check_server), lost, refused INIT
 *      (another protocol version), an answer that does not follow the protocol, no answer within the
 *      timeout, or ERROR of category unavailable or internal (docs/protocol.md, "Error categories")
 *   2  bad usage (also a --add or --sub whose form does not parse: checked before anything is sent), or
 *      rsmapd answered ERROR busy, refused, denied or malformed (not the job's owner, nothing to release, ...)
 *   3  the realloc was decided against: DENY, CANCEL or UNSUPPORTED (RFC 51's types 1-3); also a realloc
 *      interrupted by SIGINT or SIGTERM ("cancelled": the connection closing cancels it in rsmapd)
 * Each failure is one line on stderr. Every wait is bounded: status, release and cancel end within 30 s
 * (connect and answer together; $RSMAP_TIMEOUT may make it shorter), a realloc - which may wait for
 * minutes until rsmapd can decide - within --timeout S (default 3600 s).
 *
 * Installed set-group-ID rsmap next to rsmap-hook (packaging), it reaches a 0660 socket as the job's owner
 * and drops the group as soon as it is connected: rsmapd authorises every command by the peer's uid. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsmap-request.h"
#include "rsmap-shell.h"

enum { TID_COMMAND = 2, TIMEOUT_SECONDS = 30, REALLOC_TIMEOUT_SECONDS = 3600 };
/* RFC 51's answer types, in ALLOC's second argument */
static const char *const TYPES[] = { "SUCCESS", "DENY", "CANCEL", "UNSUPPORTED" };

static const char USAGE[] =
    "usage: rsmap-shell realloc [--add REQ] [--sub REQ] [--ids JSON] [--tag TAG] [--timeout S] [--job J]\n"
    "       rsmap-shell release [--ids JSON] [--job J]\n"
    "       rsmap-shell cancel TAG [--job J]\n"
    "       rsmap-shell status [--job J]\n"
    "\n"
    "Asks rsmapd, from inside a running job, for more or fewer resource-map instances (Flux RFC 51).\n"
    "  realloc   --add REQ adds what the request REQ asks for (e.g. 'gpu=1[same=id]'); --sub REQ takes\n"
    "            away what it names, --ids the exact instances ({\"host\":{\"map\":[\"id\",...]}}). Waits until\n"
    "            rsmapd decides; on SUCCESS prints the job's SGE_HGR_<map>=ids lines. --tag names the\n"
    "            realloc for cancel (1-64 of A-Z a-z 0-9 _ . : @ -). --timeout S: give up after S seconds\n"
    "            (default 3600; exit 1).\n"
    "  release   gives back instances taken away by a realloc (--ids: only those; default: all of them)\n"
    "            once the job stopped using them; prints the job's SGE_HGR_<map>=ids lines.\n"
    "  cancel    answers the waiting realloc tagged TAG with CANCEL.\n"
    "  status    prints the job as rsmapd holds it (JSON, one line).\n"
    "The job: --job J, else $JOB_ID (with .$SGE_TASK_ID for an array task), else $SLURM_JOB_ID.\n"
    "The socket: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock.\n"
    "Every other command gives up after 30 s ($RSMAP_TIMEOUT: fewer).\n"
    "Exit: 0 done; 1 rsmapd unreachable, not trusted, lost, silent or unavailable; 2 usage or rsmapd's ERROR;\n"
    "3 realloc DENY, CANCEL, UNSUPPORTED, or interrupted.\n";

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

/* Installed set-group-ID rsmap, the group reached the socket; nothing after the connect needs it. */
static int drop_group(void *ctx, char *why, size_t cap) {
    (void)ctx;
    gid_t gid = getgid();
    if (getegid() != gid && setresgid(gid, gid, gid) != 0) {
        snprintf(why, cap, "cannot drop the rsmap group: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The exit of an ERROR by its category (docs/protocol.md, "Error categories"): rsmapd's trouble is 1,
 * like no answer; the command's is 2. */
static int error_exit(enum rsmap_category c) {
    return c == RSMAP_CAT_UNAVAILABLE || c == RSMAP_CAT_INTERNAL ? EXIT_NO_DAEMON : EXIT_USAGE;
}

/* The command through rsmap_exchange (connect, peer check, INIT, the answer, within timeout_s; QUERY is
 * idempotent and tried again after a lost connection). `label` opens every message ("realloc t1"). An
 * exit code, or -1 with *answer filled after OK. */
static int exchange(unsigned code, const char *arg, const char *label, int timeout_s, struct answer *answer) {
    struct rsmap_request r = { .code = code, .arg = arg, .timeout_ms = timeout_s * 1000,
                               .idempotent = code == RSMAP_QUERY, .on_event = keep_answer, .ctx = answer,
                               .after_connect = drop_group };
    struct rsmap_outcome o;
    rsmap_exchange(&r, &o);
    switch (o.status) {
    case RSMAP_UNREACHABLE:
    case RSMAP_UNTRUSTED:
    case RSMAP_INIT_REFUSED:
        fprintf(stderr, "rsmap-shell: %s\n", o.why);
        return EXIT_NO_DAEMON;
    case RSMAP_ERROR:
        fprintf(stderr, "rsmap-shell: %s: ERROR: %s\n", label, o.why);
        return error_exit(o.category);
    default:
        break;
    }
    if (answer->unexpected) {
        fprintf(stderr, "rsmap-shell: %s: rsmapd answered with %s\n", label, answer->unexpected);
        return EXIT_NO_DAEMON;
    }
    if (o.status != RSMAP_OK) {
        fprintf(stderr, "rsmap-shell: %s: %s\n", label, o.why);
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

/* status: the job's STATE JSON on one line. */
static int print_state(const struct answer *a, const char *label) {
    (void)label;
    printf("%s\n", a->argc > 0 ? a->argv[0] : "");
    return written();
}

/* release: the job's NAME=value lines after the STATE's JSON. */
static int print_lines(const struct answer *a, const char *label) {
    (void)label;
    for (int i = 1; i < a->argc; i++) printf("%s\n", a->argv[i]);
    return written();
}

/* cancel: the ALLOC of type CANCEL is this command's own receipt. */
static int print_receipt(const struct answer *a, const char *label) {
    (void)a;
    (void)label;
    return EXIT_DONE;
}

/* realloc: ALLOC's [0] JSON, [1] the type in decimal, [2] the reason, [3..] the job's NAME=value lines. */
static int print_alloc(const struct answer *a, const char *label) {
    int type = a->argc >= 3 && strlen(a->argv[1]) == 1 && a->argv[1][0] >= '0' && a->argv[1][0] <= '3'
        ? a->argv[1][0] - '0' : -1;
    if (type < 0) {
        fprintf(stderr, "rsmap-shell: %s: rsmapd answered an ALLOC without a known type ('%s')\n", label,
                a->argc >= 2 ? a->argv[1] : "");
        return EXIT_NO_DAEMON;
    }
    if (type != 0) {
        fprintf(stderr, "rsmap-shell: %s: %s%s%s\n", label, TYPES[type], *a->argv[2] ? ": " : "", a->argv[2]);
        return EXIT_DECIDED_AGAINST;
    }
    return print_lines(&(struct answer){ .argc = a->argc - 2, .argv = a->argv + 2 }, label);
}

/* The modes: the command each sends, the event it waits for, the options it takes (in the order they are
 * tried), whether its one argument is a tag (cancel), its timeout, and how its answer is printed. */
static const struct mode {
    const char *name;
    unsigned code, want, options;
    int tag_argument, timeout_s;
    int (*print)(const struct answer *a, const char *label);
} MODES[] = {
    { "realloc", RSMAP_REALLOC, RSMAP_ALLOC, OPT_ADD | OPT_SUB | OPT_TAG | OPT_TIMEOUT | OPT_IDS | OPT_JOB, 0,
      REALLOC_TIMEOUT_SECONDS, print_alloc },
    { "release", RSMAP_RELEASE, RSMAP_STATE, OPT_IDS | OPT_JOB, 0, TIMEOUT_SECONDS, print_lines },
    { "cancel", RSMAP_REALLOC_CANCEL, RSMAP_ALLOC, OPT_JOB, 1, TIMEOUT_SECONDS, print_receipt },
    { "status", RSMAP_QUERY, RSMAP_STATE, OPT_JOB, 0, TIMEOUT_SECONDS, print_state },
};

/* The options and arguments of mode m into o; an exit code (usage, said on stderr), or -1 when they are good. */
static int read_options(const struct mode *m, int argc, char **argv, struct options *o) {
    const char *positional = NULL;
    for (int i = 2; i < argc; i++) {
        int r = shell_options(m->options, argc, argv, &i, o);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0') return shell_usage_error("%s takes no option %s", m->name, argv[i]);
        if (!m->tag_argument || positional) return shell_usage_error("%s takes no argument '%s'", m->name, argv[i]);
        positional = argv[i];
    }
    if (m->tag_argument) {
        if (!positional) return shell_usage_error("%s needs the TAG of the realloc", m->name);
        o->tag = positional;
    }
    if (m->code == RSMAP_REALLOC && !o->add && !o->sub && !o->ids) return shell_usage_error("realloc needs --add, --sub or --ids");
    if (o->tag && !shell_valid_tag(o->tag)) return shell_usage_error("tag '%s' is not 1-64 characters of A-Z a-z 0-9 _ . : @ -", o->tag);
    char why[128];
    const char *bad = o->ids ? shell_object_shape(o->ids, why, sizeof why) : NULL;
    if (bad) return shell_usage_error("--ids is not a JSON object: %s", bad);
    /* The request's form here, as the SPANK plugin checks --rsmap: one that cannot parse is a usage error
     * (exit 2), never sent; what needs this host's maps rsmapd decides (a DENY, exit 3). */
    const char *forms[][2] = { { "--add", o->add }, { "--sub", o->sub } };
    for (int i = 0; i < 2; i++) {
        char bad_form[512];
        if (forms[i][1] && rsmap_request_check(forms[i][1], bad_form, sizeof bad_form) != 0)
            return shell_usage_error("%s: %s", forms[i][0], bad_form);
    }
    return -1;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return written();
        }
    }
    if (argc < 2) return shell_usage_error("which command? realloc, release, cancel or status");
    const struct mode *m = NULL;
    for (size_t i = 0; i < sizeof MODES / sizeof *MODES; i++) {
        if (!strcmp(argv[1], MODES[i].name)) m = &MODES[i];
    }
    if (!m) return shell_usage_error("unknown command '%s'", argv[1]);
    struct options o = { 0 };
    int r = read_options(m, argc, argv, &o);
    if (r >= 0) return r;
    int timeout_s = rsmap_timeout_ms(m->timeout_s * 1000) / 1000;
    if (o.timeout) {
        char *end;
        long t = strtol(o.timeout, &end, 10);
        if (!*o.timeout || *end || t < 1 || t > 86400) return shell_usage_error("--timeout is 1 to 86400 seconds, not '%s'", o.timeout);
        timeout_s = (int)t;
    }
    char job[512];
    if (o.job) {
        if (!*o.job || strlen(o.job) >= sizeof job) return shell_usage_error("--job is empty or longer than %zu bytes", sizeof job - 1);
        snprintf(job, sizeof job, "%s", o.job);
    } else if (shell_job_from_environment(job, sizeof job) < 0) {
        return shell_usage_error("no job: JOB_ID and SLURM_JOB_ID are not set (--job J)");
    }

    struct rsmap_json j;
    rsmap_json_begin(&j);
    shell_job_members(&j, job);
    if (o.tag) rsmap_json_str(&j, "tag", o.tag);
    if (o.add) rsmap_json_str(&j, "add", o.add);
    if (o.sub) rsmap_json_str(&j, "sub", o.sub);
    if (o.ids) rsmap_json_raw(&j, "ids", o.ids);
    char *arg = rsmap_json_end(&j);
    if (!arg) {
        fprintf(stderr, "rsmap-shell: out of memory\n");
        return EXIT_USAGE;
    }
    if (strlen(arg) > RSMAP_MAX_FRAME - 64) {
        free(arg);
        return shell_usage_error("the command is longer than a frame (1 MiB)");
    }

    /* The tag rsmapd gives a realloc without one: "tid-" and the command's TID in 8 hex digits. */
    char tag[80], label[128];
    if (m->code == RSMAP_REALLOC && !o.tag) snprintf(tag, sizeof tag, "tid-%08x", (unsigned)TID_COMMAND);
    else snprintf(tag, sizeof tag, "%s", o.tag ? o.tag : "");
    snprintf(label, sizeof label, "%s%s%s", m->name, *tag ? " " : "", tag);

    struct answer a = { .want = m->want };
    if (m->code == RSMAP_REALLOC) exit_on_interrupt(label);
    r = exchange(m->code, arg, label, timeout_s, &a);
    free(arg);
    return r >= 0 ? r : m->print(&a, label);
}
