/* rsmap-client: framing and the command/answer exchange of rsmapd's agent protocol (docs/protocol.md). */
#include "rsmap-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

long long rsmap_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` or the deadline passed (0: no deadline). 0, or -1 with errno EAGAIN
 * (the deadline: what SO_RCVTIMEO would say) or poll's. */
static int ready(int fd, short events, long long deadline) {
    if (deadline <= 0) return 0;
    for (;;) {
        long long left = deadline - rsmap_now_ms();
        if (left <= 0) {
            errno = EAGAIN;
            return -1;
        }
        struct pollfd p = { .fd = fd, .events = events };
        int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (n > 0) return 0;
        if (n < 0 && errno != EINTR) return -1;
    }
}

static int write_all(int fd, const void *buf, size_t len, long long deadline) {
    const char *p = buf;
    while (len > 0) {
        /* a daemon gone mid-write is EPIPE, not a SIGPIPE death; with a deadline a full buffer waits in poll */
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | (deadline > 0 ? MSG_DONTWAIT : 0));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && deadline > 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (ready(fd, POLLOUT, deadline) < 0) return -1;
            continue;
        }
        if (n == 0) errno = EPIPE; /* nothing taken: said, never an errno left from before */
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len, long long deadline) {
    char *p = buf;
    while (len > 0) {
        if (ready(fd, POLLIN, deadline) < 0) return -1;
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ECONNRESET; /* the end came early: lost, not timed out (EAGAIN) */
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* connect() that gives up at the deadline: non-blocking, so that a full listen backlog (EAGAIN on a Unix
 * socket: the server does not accept, e.g. stopped) is tried again every 20 ms instead of blocking. */
static int connect_by(int fd, const struct sockaddr_un *a, long long deadline) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -1;
    int r;
    for (;;) {
        r = connect(fd, (const struct sockaddr *)a, sizeof *a);
        if (r == 0 || (errno != EAGAIN && errno != EINTR && errno != EINPROGRESS)) break;
        if (errno == EINPROGRESS) {
            int e = 0;
            socklen_t el = sizeof e;
            if (ready(fd, POLLOUT, deadline) < 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            r = getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 ? -1 : e ? (errno = e, -1) : 0;
            break;
        }
        if (rsmap_now_ms() + 20 >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        usleep(20000);
    }
    if (r == 0 && fcntl(fd, F_SETFL, flags) < 0) return -1; /* blocking again: every later wait polls */
    return r;
}

int rsmap_connect_by(const char *path, long long deadline, char *why, size_t cap) {
    if (!path || !*path) path = getenv("RSMAP_SOCKET"); /* honoured: the peer check below decides */
    if (!path || !*path) path = "/run/rsmap/rsmapd.sock";
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) {
        snprintf(why, cap, "cannot reach rsmapd at %s: %s", path, strerror(ENAMETOOLONG));
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect_by(fd, &a, deadline) < 0) {
        int e = errno;
        if (e == ETIMEDOUT) snprintf(why, cap, "cannot reach rsmapd at %s: it did not accept the connection in time", path);
        else snprintf(why, cap, "cannot reach rsmapd at %s: %s", path, strerror(e));
        if (fd >= 0) close(fd);
        errno = e;
        return -1;
    }
    if (rsmap_check_server(fd, path, RSMAP_SYSCONF, why, cap) < 0) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

int rsmap_send(int fd, unsigned tid, unsigned code, int argc, const char *const *argv) {
    return rsmap_send_by(fd, 0, tid, code, argc, argv);
}

size_t rsmap_frame_body(int argc, const char *const *argv) {
    size_t body = 12;
    for (int i = 0; i < argc; i++) body += 1 + (size_t)snprintf(NULL, 0, "%zx", strlen(argv[i])) + 1 + strlen(argv[i]);
    return body;
}

int rsmap_send_by(int fd, long long deadline, unsigned tid, unsigned code, int argc, const char *const *argv) {
    size_t body = rsmap_frame_body(argc, argv);
    if (body > RSMAP_MAX_FRAME) {
        errno = EMSGSIZE; /* never sent: the server would refuse it and close (docs/protocol.md, "Frames") */
        return -1;
    }
    char *frame = malloc(body + 9);
    if (!frame) {
        errno = ENOMEM;
        return -1;
    }
    size_t p = (size_t)sprintf(frame, "%08zx%08x%04x", body, tid, code);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);
        p += (size_t)sprintf(frame + p, " %zx:", len);
        memcpy(frame + p, argv[i], len);
        p += len;
    }
    int r = write_all(fd, frame, p, deadline);
    free(frame);
    return r;
}

static long hex(const char *s, int digits) {
    long v = 0;
    for (int i = 0; i < digits; i++) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    return v;
}

int rsmap_read(int fd, unsigned *tid, int *argc, char **argv, char **buf) {
    return rsmap_read_by(fd, 0, tid, argc, argv, buf);
}

int rsmap_read_by(int fd, long long deadline, unsigned *tid, int *argc, char **argv, char **buf) {
    char head[8];
    *buf = NULL;
    if (read_all(fd, head, 8, deadline) < 0) return -1;
    long len = hex(head, 8);
    /* Every -1 below sets errno: a caller tells a timeout (EAGAIN) from the rest by it, and an errno left
     * from an earlier call (a send that waited once for room) must never speak for a frame that does not decode. */
    errno = EPROTO;
    if (len > RSMAP_MAX_FRAME) errno = EMSGSIZE; /* over the bound: not read, the connection is of no more use */
    if (len < 12 || len > RSMAP_MAX_FRAME) return -1;
    char *frame = malloc((size_t)len + 1);
    if (!frame) {
        errno = ENOMEM;
        return -1;
    }
    *buf = frame;
    if (read_all(fd, frame, (size_t)len, deadline) < 0) return -1;
    long t = hex(frame, 8), code = hex(frame + 8, 4);
    errno = EPROTO;
    if (t < 0 || code < 0) return -1;
    *tid = (unsigned)t;
    *argc = 0;
    long p = 12;
    while (p < len && *argc < RSMAP_MAX_ARGS) {
        if (frame[p] != ' ') return -1;
        long q = p + 1;
        while (q < len && frame[q] != ':') q++;
        if (q >= len || q - p - 1 < 1 || q - p - 1 > 8) return -1;
        long alen = hex(frame + p + 1, (int)(q - p - 1));
        if (alen < 0 || q + 1 + alen > len) return -1;
        memmove(frame + p, frame + q + 1, (size_t)alen); /* left by the header's bytes, room for the NUL */
        frame[p + alen] = '\0';
        argv[(*argc)++] = frame + p;
        p = q + 1 + alen;
    }
    return (int)code;
}

int rsmap_finish_events(int fd, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why, size_t cap) {
    return rsmap_finish_by(fd, 0, tid, event_fn, ctx, why, cap, NULL);
}

int rsmap_finish_by(int fd, long long deadline, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why,
                    size_t cap, enum rsmap_category *category) {
    int failed = 0;
    for (;;) {
        unsigned t;
        int n;
        char *args[RSMAP_MAX_ARGS], *buf;
        int c = rsmap_read_by(fd, deadline, &t, &n, args, &buf);
        if (c < 0 || t != tid) {
            free(buf);
            if (c >= 0) errno = EPROTO; /* another TID: the protocol is not followed */
            return -1;
        }
        if (c == RSMAP_OK || c == RSMAP_ERROR) {
            if (c == RSMAP_ERROR) snprintf(why, cap, "%s", n > 0 ? args[0] : "(no reason given)");
            if (c == RSMAP_ERROR && category) *category = rsmap_category_of(n > 1 ? args[1] : NULL);
            free(buf);
            if (failed && c == RSMAP_OK) {
                errno = ECANCELED; /* an event the caller could not take: no answer, and no timeout either */
                return -1;
            }
            return c;
        }
        if (event_fn && event_fn(ctx, (unsigned)c, n, args) != 0) failed = 1;
        free(buf);
    }
}

static const char *const CATEGORIES[] = { "none", "busy", "refused", "denied", "malformed", "unavailable", "internal" };

enum rsmap_category rsmap_category_of(const char *word) {
    for (int i = 1; word && i < (int)(sizeof CATEGORIES / sizeof *CATEGORIES); i++) {
        if (!strcmp(word, CATEGORIES[i])) return (enum rsmap_category)i;
    }
    return RSMAP_CAT_NONE;
}

const char *rsmap_category_name(enum rsmap_category c) {
    return (unsigned)c < sizeof CATEGORIES / sizeof *CATEGORIES ? CATEGORIES[c] : "none";
}

/* rsmap_finish's view of the events: the NAME=value arguments of STATE, one by one. */
struct env_lines {
    rsmap_env_fn env_fn;
    void *ctx;
};

static int state_lines(void *ctx, unsigned code, int argc, char *const *argv) {
    struct env_lines *e = ctx;
    int failed = 0;
    if (code != RSMAP_STATE) return 0;
    for (int i = 1; i < argc; i++) {
        if (e->env_fn(e->ctx, argv[i]) != 0) failed = 1;
    }
    return failed;
}

int rsmap_finish(int fd, unsigned tid, rsmap_env_fn env_fn, void *ctx, char *why, size_t cap) {
    struct env_lines e = { env_fn, ctx };
    return rsmap_finish_events(fd, tid, env_fn ? state_lines : NULL, &e, why, cap);
}

int rsmap_json_string(char *out, size_t cap, const char *s) {
    size_t o = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (o + 7 >= cap) {
            out[o] = '\0';
            return -1;
        }
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return 0;
}
