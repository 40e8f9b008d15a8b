/* rsmap-client: framing and the command/answer exchange of rsmapd's agent protocol (docs/protocol.md). */
#include "rsmap-client.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL); /* a daemon gone mid-write is EPIPE, not a SIGPIPE death */
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ECONNRESET; /* the end came early: lost, not timed out (EAGAIN) */
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rsmap_connect(const char *path, char *why, size_t cap) {
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
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        snprintf(why, cap, "cannot reach rsmapd at %s: %s", path, strerror(e));
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

/* --- who may answer (rsmap_check_server) --- */

enum { CONF_MAX = 16 << 20 };

/* Java's String.strip() for ASCII, as rsmapd trims keys and values. */
static int blank(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* daemon_user of the text of rsmapd.conf, read as rsmapd reads it (rsmap.daemon.Config, rsmap.Continuation):
 * first every backslash-newline is removed (also inside a comment: the next line is then comment too, and
 * a `daemon_user =` inside a continued complex_values is a value, not a setting), then per line `#` starts
 * a comment and `key = value` is trimmed, the key in any case. 1 with the value in user, 0 when not set,
 * -1 when set twice or empty (rsmapd would refuse that file: so do we). */
static int find_daemon_user(char *text, size_t len, char *user, size_t ucap) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n') i += 2;
        else if (text[i] == '\\' && i + 2 < len && text[i + 1] == '\r' && text[i + 2] == '\n') i += 3;
        else text[o++] = text[i++];
    }
    int found = 0;
    for (size_t start = 0; start < o;) {
        size_t end = start;
        while (end < o && text[end] != '\n') end++;
        size_t stop = start;
        while (stop < end && text[stop] != '#') stop++;
        size_t eq = start;
        while (eq < stop && text[eq] != '=') eq++;
        if (eq < stop) {
            size_t k0 = start, k1 = eq, v0 = eq + 1, v1 = stop;
            while (k0 < k1 && blank(text[k0])) k0++;
            while (k1 > k0 && blank(text[k1 - 1])) k1--;
            while (v0 < v1 && blank(text[v0])) v0++;
            while (v1 > v0 && blank(text[v1 - 1])) v1--;
            if (k1 - k0 == 11 && strncasecmp(text + k0, "daemon_user", 11) == 0) {
                if (found || v1 == v0 || v1 - v0 >= ucap || memchr(text + v0, '\0', v1 - v0)) return -1;
                memcpy(user, text + v0, v1 - v0);
                user[v1 - v0] = '\0';
                found = 1;
            }
        }
        start = end + 1;
    }
    return found;
}

/* The installed configuration's daemon_user: 1 (user set, "root" by default), 0 when conf does not exist,
 * -1 with the reason in why when it cannot be believed: only a regular file of root's that nobody else may
 * write can say who serves root's hooks. fstat on the open file: what is checked is what is read. */
static int daemon_user(const char *conf, char *user, size_t ucap, char *why, size_t cap) {
    int fd = open(conf, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK); /* O_NONBLOCK: a FIFO must not hang us */
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, cap, "cannot read %s (%s), which says who may serve", conf, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *bad = NULL;
    if (fstat(fd, &st) < 0) bad = strerror(errno);
    else if (!S_ISREG(st.st_mode)) bad = "it is not a regular file";
    else if (st.st_uid != 0) bad = "it is not owned by root";
    else if (st.st_mode & (S_IWGRP | S_IWOTH)) bad = "it is writable by group or others";
    else if (st.st_size > CONF_MAX) bad = "it is larger than 16 MiB";
    char *text = bad ? NULL : malloc((size_t)st.st_size + 1);
    if (!bad && (!text || read_all(fd, text, (size_t)st.st_size) < 0)) bad = "it cannot be read whole";
    close(fd);
    int r = bad ? -1 : find_daemon_user(text, (size_t)st.st_size, user, ucap);
    free(text);
    if (bad) {
        snprintf(why, cap, "%s cannot say who may serve: %s", conf, bad);
        return -1;
    }
    if (r < 0) {
        snprintf(why, cap, "%s sets daemon_user twice, empty or too long", conf);
        return -1;
    }
    if (r == 0) snprintf(user, ucap, "root");
    return 1;
}

/* The uid of a user of /etc/passwd. Not getpwnam: rsmap-hook is static, and NSS modules loaded into a static
 * binary crash it (glibc's warning); the daemon's user is a local system account. 0 or -1. */
static int passwd_uid(const char *name, uid_t *uid) {
    FILE *f = fopen("/etc/passwd", "re");
    if (!f) return -1;
    struct passwd pw, *p;
    char buf[16384];
    int r = -1;
    while (fgetpwent_r(f, &pw, buf, sizeof buf, &p) == 0) {
        if (!strcmp(p->pw_name, name)) {
            *uid = p->pw_uid;
            r = 0;
            break;
        }
    }
    fclose(f);
    return r;
}

int rsmap_check_server(int fd, const char *socket, const char *conf, char *why, size_t cap) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    char user[256], reason[1024];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof cred) {
        snprintf(why, cap, "not trusting the server at %s: the kernel does not say who it is (%s)", socket,
                 strerror(errno));
        errno = EPERM;
        return -1;
    }
    if (cred.uid == 0) return 0; /* rsmapd runs as root (packaging's unit) */
    int installed = daemon_user(conf, user, sizeof user, reason, sizeof reason);
    uid_t trusted;
    if (installed < 0) {
        snprintf(why, cap, "not trusting the server at %s (uid %u): %s", socket, (unsigned)cred.uid, reason);
    } else if (installed == 0) {
        /* No installed rsmapd: whoever runs the tour as one user runs its daemon too. A job's owner on a real
         * host cannot use this: there the packages install the configuration. */
        if (cred.uid == getuid()) return 0;
        snprintf(why, cap, "not trusting the server at %s: it runs as uid %u, not as root or as this process's "
                 "user (uid %u; no %s installed)", socket, (unsigned)cred.uid, (unsigned)getuid(), conf);
    } else if (strcmp(user, "root") != 0 && passwd_uid(user, &trusted) < 0) {
        snprintf(why, cap, "not trusting the server at %s (uid %u): daemon_user '%s' of %s is not in /etc/passwd",
                 socket, (unsigned)cred.uid, user, conf);
    } else if (strcmp(user, "root") != 0 && trusted == cred.uid) {
        return 0;
    } else {
        snprintf(why, cap, "not trusting the server at %s: it runs as uid %u, not as root or daemon_user '%s' of %s",
                 socket, (unsigned)cred.uid, user, conf);
    }
    errno = EPERM;
    return -1;
}

int rsmap_send(int fd, unsigned tid, unsigned code, int argc, const char *const *argv) {
    size_t body = 12;
    for (int i = 0; i < argc; i++) body += 1 + (size_t)snprintf(NULL, 0, "%zx", strlen(argv[i])) + 1 + strlen(argv[i]);
    if (body > RSMAP_MAX_FRAME) return -1;
    char *frame = malloc(body + 9);
    if (!frame) return -1;
    size_t p = (size_t)sprintf(frame, "%08zx%08x%04x", body, tid, code);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);
        p += (size_t)sprintf(frame + p, " %zx:", len);
        memcpy(frame + p, argv[i], len);
        p += len;
    }
    int r = write_all(fd, frame, p);
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
    char head[8];
    *buf = NULL;
    if (read_all(fd, head, 8) < 0) return -1;
    long len = hex(head, 8);
    if (len < 12 || len > RSMAP_MAX_FRAME) return -1;
    char *frame = malloc((size_t)len + 1);
    if (!frame) return -1;
    *buf = frame;
    if (read_all(fd, frame, (size_t)len) < 0) return -1;
    long t = hex(frame, 8), code = hex(frame + 8, 4);
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

int rsmap_call(int fd, unsigned tid, unsigned code, int argc, const char *const *argv, rsmap_env_fn env_fn,
               void *ctx, char *why, size_t cap) {
    if (rsmap_send(fd, tid, code, argc, argv) < 0) return -1;
    return rsmap_finish(fd, tid, env_fn, ctx, why, cap);
}

int rsmap_finish_events(int fd, unsigned tid, rsmap_event_fn event_fn, void *ctx, char *why, size_t cap) {
    int failed = 0;
    for (;;) {
        unsigned t;
        int n;
        char *args[RSMAP_MAX_ARGS], *buf;
        int c = rsmap_read(fd, &t, &n, args, &buf);
        if (c < 0 || t != tid) {
            free(buf);
            return -1;
        }
        if (c == RSMAP_OK || c == RSMAP_ERROR) {
            if (c == RSMAP_ERROR) snprintf(why, cap, "%s", n > 0 ? args[0] : "(no reason given)");
            free(buf);
            return failed && c == RSMAP_OK ? -1 : c;
        }
        if (event_fn && event_fn(ctx, (unsigned)c, n, args) != 0) failed = 1;
        free(buf);
    }
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

int rsmap_init(int fd, char *why, size_t cap) {
    const char *version[] = { "1" };
    return rsmap_call(fd, 1, RSMAP_INIT, 1, version, NULL, NULL, why, cap);
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
