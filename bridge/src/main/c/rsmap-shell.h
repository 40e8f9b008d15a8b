/* rsmap-shell's reading of its command line and environment (rsmap-shell-args.c), apart from the exchange
 * and the answers (rsmap-shell.c). */
#ifndef RSMAP_SHELL_H
#define RSMAP_SHELL_H

#include <stddef.h>

#include "rsmap-client.h"

enum { EXIT_DONE = 0, EXIT_NO_DAEMON = 1, EXIT_USAGE = 2, EXIT_DECIDED_AGAINST = 3 };

/* One line on stderr ("rsmap-shell: ... (rsmap-shell --help)"), returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int shell_usage_error(const char *fmt, ...);

/* The options of rsmap-shell's commands; each mode takes a set of them (OPT_*). */
struct options {
    const char *add, *sub, *tag, *timeout, *ids, *job;
};
enum { OPT_ADD = 1, OPT_SUB = 2, OPT_TAG = 4, OPT_TIMEOUT = 8, OPT_IDS = 16, OPT_JOB = 32 };

/* argv[*i] as one of the options in `allowed` (--name VALUE or --name=VALUE) into o: 1 when it is one,
 * 0 when it is none of them, -1 (message printed) when misused. */
int shell_options(unsigned allowed, int argc, char **argv, int *i, struct options *o);

/* NULL when --ids is one JSON object as far as its brackets and strings go, else what is wrong. */
const char *shell_object_shape(const char *s, char *why, size_t cap);

/* Whether tag has the tag's grammar: 1-64 of A-Z a-z 0-9 _ . : @ -. */
int shell_valid_tag(const char *tag);

/* The job this runs in ($JOB_ID[.$SGE_TASK_ID], else $SLURM_JOB_ID) into out; 0, or -1 when there is none. */
int shell_job_from_environment(char *out, size_t cap);

/* "job" and "task" of J into the command's JSON. */
void shell_job_members(struct rsmap_json *t, const char *job);

#endif
