/* rsmap-client: the C client of rsmapd's agent protocol (docs/protocol.md, "Frames"), shared by every
 * C program in the job path (rsmap-hook, rsmap-shell, the Slurm SPANK plugin; build.sh archives it in
 * librsmap-client.a), so that none of them starts a JVM or parses JSON. Reentrant: no static buffers
 * (slurmd runs plugins on several threads). */
#ifndef RSMAP_CLIENT_H
#define RSMAP_CLIENT_H

#include <stddef.h>

enum rsmap_code {
    RSMAP_INIT = 0x0001,
    RSMAP_JOB_START = 0x0010,
    RSMAP_JOB_END = 0x0011,
    RSMAP_QUERY = 0x0012,
    RSMAP_JOB_ENTER = 0x0014,
    RSMAP_REALLOC = 0x0015, /* Flux RFC 51: docs/protocol.md, "Dynamic reallocation" */
    RSMAP_RELEASE = 0x0016,
    RSMAP_REALLOC_CANCEL = 0x0017,
    RSMAP_OK = 0x8000,
    RSMAP_ERROR = 0x8001,
    RSMAP_STATE = 0x8004,
    RSMAP_ALLOC = 0x8008 /* a realloc's answer: JSON, type, reason, then NAME=value lines */
};

enum { RSMAP_MAX_FRAME = 1 << 20, RSMAP_MAX_ARGS = 64 };

/* Called with each NAME=value argument of a STATE event after its JSON (the granted SGE_HGR_*). */
typedef int (*rsmap_env_fn)(void *ctx, const char *name_value);

/* Called with each event of a command before its OK or ERROR (STATE, ALLOC, ...): the code and the
 * arguments, which live until the call returns. */
typedef int (*rsmap_event_fn)(void *ctx, unsigned code, int argc, char *const *argv);

/* The installed configuration, root's: the only place that says which user besides root may serve the
 * protocol (daemon_user). A compile-time constant, never the environment - a job's owner sets that. Test
 * builds point it elsewhere (-DRSMAP_SYSCONF=...). */
#ifndef RSMAP_SYSCONF
#define RSMAP_SYSCONF "/etc/rsmap/rsmapd.conf"
#endif

/* Connects to `path`, or $RSMAP_SOCKET, or /run/rsmap/rsmapd.sock, and checks who answers
 * (rsmap_check_server). -1 with errno set and the reason, naming the socket, in why. */
int rsmap_connect(const char *path, char *why, size_t cap);

/* Whether the server on the connected fd may be believed. Anyone can bind a socket where $RSMAP_SOCKET
 * points, and a job's owner sets that variable: so the kernel's word on the server (SO_PEERCRED) decides.
 * Trusted: uid 0; the uid of daemon_user in `conf` (default root) when conf is a regular file of root's
 * that only root may write; where conf does not exist (no installed rsmapd: the README's tour, all as one
 * user), also this process's real uid. 0, or -1 (errno EPERM) with the reason in why. */
int rsmap_check_server(int fd, const char *socket, const char *conf, char *why, size_t cap);

/* One frame: LENGTH(8 hex) TID(8 hex) CODE(4 hex), then " HEXLEN:BYTES" per argument. 0 or -1. */
int rsmap_send(int fd, unsigned tid, unsigned code, int argc, const char *const *argv);

/* Reads one frame into a buffer it allocates (*buf, free it); its arguments become NUL-terminated
 * strings inside it. Returns the code, or -1 on a lost connection or a frame that does not decode. */
int rsmap_read(int fd, unsigned *tid, int *argc, char **argv, char **buf);

/* Sends a command and reads its events up to its OK (returns RSMAP_OK) or ERROR (RSMAP_ERROR, the
 * reason in why). Each STATE argument after the first goes to env_fn (may be NULL); a non-zero return
 * of env_fn is remembered and makes the call return -1 after the exchange ends. -1 on a lost connection. */
int rsmap_call(int fd, unsigned tid, unsigned code, int argc, const char *const *argv, rsmap_env_fn env_fn,
               void *ctx, char *why, size_t cap);

/* The second half of rsmap_call: reads the events of `tid`, sent before, up to its OK or ERROR. Lets a
 * client send several commands before reading (INIT and JOB_START in one round trip). */
int rsmap_finish(int fd, unsigned tid, rsmap_env_fn env_fn, void *ctx, char *why, size_t cap);

/* rsmap_finish for every kind of event: each event of `tid` goes whole to event_fn (may be NULL), whose
 * non-zero return is remembered as env_fn's is. The reader of events other than STATE (rsmap-shell's ALLOC). */
int rsmap_finish_events(int fd, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why, size_t cap);

/* INIT with protocol version 1 on a fresh connection: RSMAP_OK, RSMAP_ERROR (why) or -1. */
int rsmap_init(int fd, char *why, size_t cap);

/* The JSON string body of s (quotes, backslashes and control characters escaped), cut to fit cap;
 * returns 0, or -1 when it did not fit. */
int rsmap_json_string(char *out, size_t cap, const char *s);

#endif
