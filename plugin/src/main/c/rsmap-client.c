/* rsmap-client: framing and the command/answer exchange of rsmapd's agent protocol (docs/protocol.md). */
#include "rsmap-client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
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
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rsmap_connect(const char *path) {
    if (!path || !*path) path = getenv("RSMAP_SOCKET");
    if (!path || !*path) path = "/run/rsmap/rsmapd.sock";
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
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

int rsmap_finish(int fd, unsigned tid, rsmap_env_fn env_fn, void *ctx, char *why, size_t cap) {
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
        if (c == RSMAP_STATE && env_fn) {
            for (int i = 1; i < n; i++) {
                if (env_fn(ctx, args[i]) != 0) failed = 1;
            }
        }
        free(buf);
    }
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
