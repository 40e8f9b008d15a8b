/* A hostile local peer for FloodIT: holds N connections to rsmapd's socket for SECONDS
 * and opens a new one for each the daemon closes, as fast as the socket takes them.
 *   idle    connect, send nothing
 *   frames  send the LENGTH of a maximum-size frame and all of its bytes but the last, then hold
 *   garbage even slots send random bytes (no LENGTH at all); odd slots send well-delimited frames with a bad
 *           TID, again and again, and read the ERRORs
 * usage: flood idle|frames|garbage SOCKET N SECONDS [MAX_FRAME]
 * prints one line: connects= closed= refusals= peak_open= again= */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum mode { IDLE, FRAMES, GARBAGE };

struct conn {
    int fd;
    size_t sent;
};

static enum mode mode;
static struct sockaddr_un addr;
static char *frame; /* FRAMES: what each connection sends */
static size_t frame_len;
static char garbage[4096];
static char bad_frames[4096]; /* GARBAGE, odd slots: frames "00000014zzzzzzzz0012 4:abcd" */
static size_t bad_len;
static long connects, closed_by_server, refusals, again;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* A connected non-blocking socket, or -1 when the listen backlog is full (EAGAIN) or anything failed. */
static int open_one(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        if (errno == EAGAIN) {
            again++;
        }
        close(fd);
        return -1;
    }
    connects++;
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: flood idle|frames|garbage SOCKET N SECONDS [MAX_FRAME]\n");
        return 2;
    }
    mode = strcmp(argv[1], "idle") == 0 ? IDLE : strcmp(argv[1], "frames") == 0 ? FRAMES : GARBAGE;
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", argv[2]);
    int n = atoi(argv[3]);
    double until = now() + atof(argv[4]);
    long max_frame = argc > 5 ? atol(argv[5]) : 1048576;

    signal(SIGPIPE, SIG_IGN); /* the daemon closes connections under it: that is the point */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((long) rl.rlim_cur < n + 16) {
        fprintf(stderr, "flood: RLIMIT_NOFILE %ld is below %d connections\n", (long) rl.rlim_cur, n);
        return 2;
    }

    frame_len = 8 + (size_t) max_frame - 1;
    frame = malloc(frame_len);
    snprintf(frame, 9, "%08lx", max_frame);
    memset(frame + 8, 'x', frame_len - 8);
    srand(11);
    for (size_t i = 0; i < sizeof garbage; i++) {
        garbage[i] = (char) (rand() & 0xff);
    }
    garbage[0] = 'z'; /* never 8 hex digits */
    const char *bad = "00000014zzzzzzzz0012 4:abcd";
    size_t one = strlen(bad);
    for (bad_len = 0; bad_len + one <= sizeof bad_frames; bad_len += one) {
        memcpy(bad_frames + bad_len, bad, one);
    }

    struct conn *c = calloc((size_t) n, sizeof *c);
    int *free_slots = malloc((size_t) n * sizeof *free_slots);
    int nfree = 0;
    for (int i = n - 1; i >= 0; i--) {
        c[i].fd = -1;
        free_slots[nfree++] = i;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event events[256];
    char in[65536];
    long open_now = 0, peak = 0;

    while (now() < until) {
        while (nfree > 0) { /* (re)connect every free slot the backlog takes */
            int s = free_slots[nfree - 1];
            int fd = open_one();
            if (fd < 0) {
                break;
            }
            nfree--;
            c[s].fd = fd;
            c[s].sent = 0;
            struct epoll_event e = {.events = EPOLLIN | (mode == IDLE ? 0 : EPOLLOUT), .data.u32 = (unsigned) s};
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
            if (++open_now > peak) {
                peak = open_now;
            }
        }
        int k = epoll_wait(ep, events, 256, nfree > 0 ? 1 : 50);
        for (int i = 0; i < k; i++) {
            int s = (int) events[i].data.u32;
            struct conn *x = &c[s];
            if (x->fd < 0) {
                continue;
            }
            int gone = 0;
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t r = read(x->fd, in, sizeof in);
                if (r > 0 && memmem(in, (size_t) r, "too many connections", 20) != NULL) {
                    refusals++;
                }
                gone = r == 0 || (r < 0 && errno != EAGAIN);
            }
            if (!gone && (events[i].events & EPOLLOUT)) {
                ssize_t w;
                if (mode == FRAMES) {
                    w = write(x->fd, frame + x->sent, frame_len - x->sent);
                    if (w > 0 && (x->sent += (size_t) w) == frame_len) {
                        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (unsigned) s};
                        epoll_ctl(ep, EPOLL_CTL_MOD, x->fd, &e); /* all but the last byte: hold */
                    }
                } else {
                    w = s % 2 == 0 ? write(x->fd, garbage, sizeof garbage) : write(x->fd, bad_frames, bad_len);
                }
                gone = w < 0 && errno != EAGAIN;
            }
            if (gone) {
                closed_by_server++;
                close(x->fd); /* also takes it out of the epoll set */
                x->fd = -1;
                free_slots[nfree++] = s;
                open_now--;
            }
        }
    }
    printf("connects=%ld closed=%ld refusals=%ld peak_open=%ld again=%ld\n", connects, closed_by_server, refusals,
           peak, again);
    return 0;
}
