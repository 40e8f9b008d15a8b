/* the daemon and its protocol's round-trip benchmark in C: protocol clients timing INIT-then-QUERY round trips, and the
 * baseline server they are compared with, a raw Unix-socket ping-pong answering every frame at once.
 *
 *   pingpong serve SOCKET REPLY_BYTES
 *       binds SOCKET, prints "ready", and answers each frame it reads with one OK frame of REPLY_BYTES
 *       bytes in one write (the size of rsmapd's STATE + OK answer), a thread per connection as rsmapd
 *       has; exits when its standard input closes, so a dead harness leaves no server behind.
 *   pingpong clients SOCKET CLIENTS ROUNDS WARMUP
 *       CLIENTS threads each connect, send INIT and wait for its OK, do WARMUP untimed QUERY round trips,
 *       meet at a barrier, then time ROUNDS QUERY round trips (a round trip ends with the OK or ERROR
 *       frame; an ERROR stops the run). Prints one line:
 *       "clients=N round_trips=M p50_us=.. p99_us=.. max_us=.. per_s=..".
 *
 * Frames are those of docs/protocol.md: 8 hex LENGTH, 8 hex TID, 4 hex CODE, then " HEXLEN:BYTES"
 * arguments. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUF (1 << 20)

static void die(const char *what) {
    perror(what);
    exit(1);
}

static int unix_socket(const char *path, struct sockaddr_un *a) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) {
        fprintf(stderr, "pingpong: socket path too long: %s\n", path);
        exit(2);
    }
    strcpy(a->sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    return fd;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A connection's read side: frames are cut out of what read() returned, more is read on demand. */
struct reader {
    int fd;
    size_t have, off;
    char *buf;
};

static long hex(const char *p, int digits) {
    char tmp[9];
    memcpy(tmp, p, (size_t)digits);
    tmp[digits] = 0;
    char *end;
    long v = strtol(tmp, &end, 16);
    return *end ? -1 : v;
}

/* The next whole frame: its start in r->buf and total length; 0 at end of stream, -1 on a bad frame. */
static long next_frame(struct reader *r, const char **frame) {
    for (;;) {
        size_t avail = r->have - r->off;
        if (avail >= 8) {
            long body = hex(r->buf + r->off, 8);
            if (body < 12 || body > BUF - 8) return -1;
            if (avail >= (size_t)body + 8) {
                *frame = r->buf + r->off;
                r->off += (size_t)body + 8;
                return body + 8;
            }
        }
        if (r->off > 0) { /* keep the partial frame at the start */
            memmove(r->buf, r->buf + r->off, avail);
            r->have = avail;
            r->off = 0;
        }
        ssize_t n = read(r->fd, r->buf + r->have, BUF - r->have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -1 : 0;
        r->have += (size_t)n;
    }
}

/* ---- serve ---------------------------------------------------------------------------------------- */

static char *reply;
static size_t reply_len;

static void *serve_one(void *arg) {
    struct reader r = {.fd = (int)(long)arg, .buf = malloc(BUF)};
    char *out = malloc(reply_len);
    memcpy(out, reply, reply_len);
    const char *f;
    while (next_frame(&r, &f) > 0) {
        memcpy(out + 8, f + 8, 8); /* the command's TID */
        if (write_all(r.fd, out, reply_len) < 0) break;
    }
    close(r.fd);
    free(r.buf);
    free(out);
    return NULL;
}

static void *exit_on_stdin_eof(void *arg) {
    (void)arg;
    char c;
    while (read(0, &c, 1) > 0) {
    }
    exit(0);
}

static int serve(const char *path, long bytes) {
    /* One OK frame of exactly `bytes`: 20 bytes of header, " HEXLEN:" and padding. */
    if (bytes < 20 + 3 + 1) {
        fprintf(stderr, "pingpong: REPLY_BYTES must be at least 24\n");
        return 2;
    }
    long pad = bytes - 20 - 2;
    while (pad + 20 + 2 + snprintf(NULL, 0, "%lx", pad) > bytes) pad--;
    int hexlen = snprintf(NULL, 0, "%lx", pad);
    reply_len = (size_t)(20 + 2 + hexlen + pad);
    reply = malloc(reply_len + 32);
    int p = sprintf(reply, "%08lx%08x8000 %lx:", (long)(reply_len - 8), 0, pad);
    memset(reply + p, 'x', (size_t)pad);

    struct sockaddr_un a;
    int fd = unix_socket(path, &a);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) die("bind");
    if (listen(fd, 1024) < 0) die("listen");
    pthread_t t;
    pthread_create(&t, NULL, exit_on_stdin_eof, NULL);
    printf("ready reply_bytes=%zu\n", reply_len);
    fflush(stdout);
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            die("accept");
        }
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 * 1024);
        if (pthread_create(&t, &at, serve_one, (void *)(long)c) != 0) die("pthread_create");
        pthread_attr_destroy(&at);
    }
}

/* ---- clients -------------------------------------------------------------------------------------- */

static const char *sock_path;
static long rounds, warmup;
static pthread_barrier_t barrier;

struct client {
    pthread_t thread;
    long *ns;
};

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Sends one command and reads events up to its OK; exits the run on ERROR or a closed connection. */
static void round_trip(struct reader *r, unsigned tid, const char *code, const char *arg) {
    char cmd[128];
    int body = 12 + (arg ? 1 + snprintf(NULL, 0, "%zx", strlen(arg)) + 1 + (int)strlen(arg) : 0);
    int n = sprintf(cmd, "%08x%08x%s", body, tid, code);
    if (arg) n += sprintf(cmd + n, " %zx:%s", strlen(arg), arg);
    if (write_all(r->fd, cmd, (size_t)n) < 0) die("send");
    for (;;) {
        const char *f;
        long len = next_frame(r, &f);
        if (len <= 0) {
            fprintf(stderr, "pingpong: connection closed or bad frame\n");
            exit(1);
        }
        if (memcmp(f + 16, "8001", 4) == 0) {
            fprintf(stderr, "pingpong: ERROR: %.*s\n", (int)(len - 20), f + 20);
            exit(1);
        }
        if (memcmp(f + 16, "8000", 4) == 0) return;
    }
}

static void *client_run(void *arg) {
    struct client *c = arg;
    struct sockaddr_un a;
    struct reader r = {.fd = unix_socket(sock_path, &a), .buf = malloc(BUF)};
    if (connect(r.fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    unsigned tid = 1;
    round_trip(&r, tid++, "0001", "1"); /* INIT 1 */
    for (long i = 0; i < warmup; i++) round_trip(&r, tid++, "0012", "{}");
    pthread_barrier_wait(&barrier);
    for (long i = 0; i < rounds; i++) {
        long long t0 = now_ns();
        round_trip(&r, tid++, "0012", "{}"); /* QUERY */
        c->ns[i] = (long)(now_ns() - t0);
    }
    close(r.fd);
    free(r.buf);
    return NULL;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int clients(const char *path, long n) {
    sock_path = path;
    struct client *cs = calloc((size_t)n, sizeof *cs);
    long *all = malloc(sizeof(long) * (size_t)(n * rounds));
    pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
    for (long i = 0; i < n; i++) {
        cs[i].ns = all + i * rounds;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 256 * 1024);
        if (pthread_create(&cs[i].thread, &at, client_run, &cs[i]) != 0) die("pthread_create");
        pthread_attr_destroy(&at);
    }
    pthread_barrier_wait(&barrier);
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) pthread_join(cs[i].thread, NULL);
    double secs = (double)(now_ns() - t0) / 1e9;
    long total = n * rounds;
    qsort(all, (size_t)total, sizeof(long), cmp_long);
    printf("clients=%ld round_trips=%ld p50_us=%.1f p99_us=%.1f max_us=%.1f per_s=%.0f\n", n, total,
           all[total / 2] / 1e3, all[(long)(total * 0.99)] / 1e3, all[total - 1] / 1e3, total / secs);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "serve") == 0) return serve(argv[2], atol(argv[3]));
    if (argc == 6 && strcmp(argv[1], "clients") == 0) {
        rounds = atol(argv[4]);
        warmup = atol(argv[5]);
        long n = atol(argv[3]);
        if (n < 1 || rounds < 1 || warmup < 0) {
            fprintf(stderr, "pingpong: CLIENTS and ROUNDS must be at least 1\n");
            return 2;
        }
        return clients(argv[2], n);
    }
    fprintf(stderr, "usage: pingpong serve SOCKET REPLY_BYTES | pingpong clients SOCKET CLIENTS ROUNDS WARMUP\n");
    return 2;
}
