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
    RSMAP_PLACE = 0x001b, /* the authority's placement: docs/alternatives.md */
    RSMAP_OK = 0x8000,
    RSMAP_ERROR = 0x8001,
    RSMAP_STATE = 0x8004,
    RSMAP_ALLOC = 0x8008 /* a realloc's answer: JSON, type, reason, then NAME=value lines */
};

enum { RSMAP_MAX_FRAME = 1 << 20, RSMAP_MAX_ARGS = 64 };

/* ERROR's second argument (docs/protocol.md, "Error categories"): what a client decides by, never the
 * reason's words. RSMAP_CAT_NONE: an ERROR without one (a daemon older than the categories), or a word
 * not in the closed list; the client then falls back to what it did before. */
enum rsmap_category {
    RSMAP_CAT_NONE = 0,
    RSMAP_CAT_BUSY,
    RSMAP_CAT_REFUSED,
    RSMAP_CAT_DENIED,
    RSMAP_CAT_MALFORMED,
    RSMAP_CAT_UNAVAILABLE,
    RSMAP_CAT_INTERNAL
};


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

/* The clock of every deadline below: monotonic milliseconds. */
long long rsmap_now_ms(void);

/* Connects to `path`, or $RSMAP_SOCKET, or /run/rsmap/rsmapd.sock, and checks who answers
 * (rsmap_check_server); gives up at `deadline` (rsmap_now_ms; non-blocking connect, polled; errno
 * ETIMEDOUT), as a server that does not accept (a full listen backlog) would keep it. -1 with errno set
 * and the reason, naming the socket, in why. */
int rsmap_connect_by(const char *path, long long deadline, char *why, size_t cap);

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

/* Reads the events of `tid`, sent before, up to its OK (returns RSMAP_OK) or ERROR (RSMAP_ERROR, the
 * reason in why); lets a client send several commands before reading (INIT and JOB_START in one round
 * trip). Each STATE argument after the first goes to env_fn (may be NULL); a non-zero return of env_fn is
 * remembered and makes the call return -1 after the exchange ends. -1 on a lost connection. */
int rsmap_finish(int fd, unsigned tid, rsmap_env_fn env_fn, void *ctx, char *why, size_t cap);

/* rsmap_finish for every kind of event: each event of `tid` goes whole to event_fn (may be NULL), whose
 * non-zero return is remembered as env_fn's is. The reader of events other than STATE (rsmap-shell's ALLOC). */
int rsmap_finish_events(int fd, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why, size_t cap);

/* The category of a word on the wire ("busy", ...); RSMAP_CAT_NONE for NULL or another word. */
enum rsmap_category rsmap_category_of(const char *word);

/* The word of a category ("busy", ...), "none" for RSMAP_CAT_NONE. */
const char *rsmap_category_name(enum rsmap_category c);

/* --- one exchange (rsmap-exchange.c): what every C client does, bounded in time --- */

/* What an exchange came to without an answer; else RSMAP_OK or RSMAP_ERROR. */
enum {
    RSMAP_UNREACHABLE = -1, /* no connection within the timeout (no socket, refused, a full backlog) */
    RSMAP_UNTRUSTED = -2,   /* the server is not rsmapd's (rsmap_check_server) */
    RSMAP_LOST = -3,        /* the connection ended, or a frame did not decode, before the answer */
    RSMAP_TIMED_OUT = -4,   /* connected, but no whole answer within the timeout (a stopped rsmapd) */
    RSMAP_INIT_REFUSED = -5, /* INIT answered ERROR: another protocol version, not this host's rsmapd now */
    RSMAP_TOO_LARGE = -6     /* a frame over RSMAP_MAX_FRAME: the argument (never sent) or the answer; final */
};

/* One command: connect to `socket` (NULL: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock) and check who
 * answers, INIT and the command sent together, then the command's events up to its OK or ERROR, each to
 * on_event (may be NULL; a non-zero return makes an OK count as RSMAP_LOST). Everything - connect, every
 * write and read, the retries - ends by one deadline, timeout_ms after the start. An idempotent command
 * (JOB_START, JOB_END, QUERY) is tried again after a lost connection (rsmapd may have died before it
 * answered) and, from the second try on, when unreachable (it may be restarting), with reset(ctx) before
 * each retry; an answer, an untrusted server, a frame over RSMAP_MAX_FRAME or the deadline is final.
 * after_connect(ctx) (may be NULL) runs once connected, before anything is sent: non-zero gives up (RSMAP_UNREACHABLE, the reason in why). */
struct rsmap_request {
    const char *socket;
    unsigned code;
    const char *arg; /* the one argument: a JSON object */
    int timeout_ms;
    int idempotent;
    rsmap_event_fn on_event;
    void *ctx;
    void (*reset)(void *ctx);
    int (*after_connect)(void *ctx, char *why, size_t cap);
};

/* The outcome: status RSMAP_OK, RSMAP_ERROR (why: the reason; category) or one of the codes above (why
 * says what happened, naming the socket or the command). */
struct rsmap_outcome {
    int status;
    enum rsmap_category category;
    int tries;
    char why[4096];
};

void rsmap_exchange(const struct rsmap_request *r, struct rsmap_outcome *out);

/* A timeout in milliseconds: `standard`, or $RSMAP_TIMEOUT seconds when that is a smaller positive whole
 * number (a test's, or an admin's who wants hooks to give up sooner; never longer than documented). */
int rsmap_timeout_ms(int standard);

/* --- the JSON argument (rsmap-json.c): one builder for every client --- */

/* A JSON object built member by member; `failed` once memory ran out or a value did not fit. */
struct rsmap_json {
    char *s;
    size_t len, cap;
    int failed;
};

void rsmap_json_begin(struct rsmap_json *j);
/* ,"key":"value" - the value escaped (quotes, backslashes, control characters) */
void rsmap_json_str(struct rsmap_json *j, const char *key, const char *value);
/* ,"key":n */
void rsmap_json_int(struct rsmap_json *j, const char *key, long n);
/* ,"key":JSON - a value that is JSON already (a list, an object) */
void rsmap_json_raw(struct rsmap_json *j, const char *key, const char *json);
/* Closes the object: its text, or NULL (memory ran out); free it with free(). */
char *rsmap_json_end(struct rsmap_json *j);

/* rsmap_send, rsmap_read and rsmap_finish_events that give up at `deadline` (0: never) with errno EAGAIN;
 * rsmap_finish_by also says the ERROR's category (may be NULL). */
/* The body of a frame of these arguments in bytes, what its length field says: over RSMAP_MAX_FRAME it is
 * never sent (rsmap_send_by fails with EMSGSIZE). */
size_t rsmap_frame_body(int argc, const char *const *argv);
int rsmap_send_by(int fd, long long deadline, unsigned tid, unsigned code, int argc, const char *const *argv);
int rsmap_read_by(int fd, long long deadline, unsigned *tid, int *argc, char **argv, char **buf);
int rsmap_finish_by(int fd, long long deadline, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why,
                    size_t cap, enum rsmap_category *category);

/* The JSON string body of s (quotes, backslashes and control characters escaped), cut to fit cap;
 * returns 0, or -1 when it did not fit. */
int rsmap_json_string(char *out, size_t cap, const char *s);

#endif
