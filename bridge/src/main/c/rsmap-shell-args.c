/* rsmap-shell-args: the command line and environment of rsmap-shell: options, the --ids shape, the tag's
 * grammar, the job it runs in. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsmap-shell.h"

int shell_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("rsmap-shell: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (rsmap-shell --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* --name VALUE or --name=VALUE into *slot; 1 when argv[*i] is that option, -1 (message printed) when misused. */
static int option(char **argv, int argc, int *i, const char *name, const char **slot) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] != '\0' && argv[*i][n] != '=')) return 0;
    if (*slot) {
        shell_usage_error("%s is given twice", name);
        return -1;
    }
    if (argv[*i][n] == '=') {
        *slot = argv[*i] + n + 1;
    } else if (*i + 1 < argc) {
        *slot = argv[++*i];
    } else {
        shell_usage_error("%s needs a value", name);
        return -1;
    }
    return 1;
}

/* In the order they are tried: the order of the usage line. */
static const struct {
    const char *name;
    unsigned bit;
    size_t at;
} OPTIONS[] = {
    { "--add", OPT_ADD, offsetof(struct options, add) },
    { "--sub", OPT_SUB, offsetof(struct options, sub) },
    { "--tag", OPT_TAG, offsetof(struct options, tag) },
    { "--timeout", OPT_TIMEOUT, offsetof(struct options, timeout) },
    { "--ids", OPT_IDS, offsetof(struct options, ids) },
    { "--job", OPT_JOB, offsetof(struct options, job) },
};

int shell_options(unsigned allowed, int argc, char **argv, int *i, struct options *o) {
    for (size_t k = 0; k < sizeof OPTIONS / sizeof *OPTIONS; k++) {
        if (!(allowed & OPTIONS[k].bit)) continue;
        int r = option(argv, argc, i, OPTIONS[k].name, (const char **)((char *)o + OPTIONS[k].at));
        if (r != 0) return r;
    }
    return 0;
}

/* Whether --ids is one JSON object, as far as its brackets and strings go: rsmapd parses and validates it
 * (host -> map -> ids), this only keeps a stray quote or brace from turning the command's JSON into another
 * object. NULL, or what is wrong. */
const char *shell_object_shape(const char *s, char *why, size_t cap) {
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
int shell_valid_tag(const char *tag) {
    size_t n = strlen(tag);
    if (n < 1 || n > 64) return 0;
    return strspn(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-") == n;
}

static int digits(const char *s) {
    return s && *s && strspn(s, "0123456789") == strlen(s);
}

/* The job this runs in: $JOB_ID with "." $SGE_TASK_ID when that is a number (execd sets "undefined" for a
 * job that is not an array), else $SLURM_JOB_ID. Written into out; 0, or -1 when there is none. */
int shell_job_from_environment(char *out, size_t cap) {
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
void shell_job_members(struct rsmap_json *t, const char *job) {
    const char *dot = strrchr(job, '.');
    if (dot && dot != job && digits(dot + 1)) {
        char *name = strndup(job, (size_t)(dot - job));
        if (!name) {
            t->failed = 1;
            return;
        }
        rsmap_json_str(t, "job", name);
        rsmap_json_str(t, "task", dot + 1);
        free(name);
    } else {
        rsmap_json_str(t, "job", job);
    }
}

