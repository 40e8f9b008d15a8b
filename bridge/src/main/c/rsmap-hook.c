/* rsmap-hook: what sge_execd runs as prolog, starter_method and epilog - a small client of rsmapd's agent
 * protocol (docs/protocol.md), so that no JVM starts in the job path. Modes: prolog (JOB_START),
 * starter (the job's environment, then exec), epilog (JOB_END).
 *
 * Exit codes as execd reads them from a prolog: 0 granted; 99 reschedule the job elsewhere (this host
 * cannot serve it now, or rsmapd is unreachable); 100 put the job in error state (its request is
 * refused). The epilog exits 0 once the grant is gone (also when there was none), 1 if rsmapd is
 * unreachable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum { INIT = 0x0001, JOB_START = 0x0010, JOB_END = 0x0011, OK = 0x8000, ERROR = 0x8001 };
enum { EXIT_RESCHEDULE = 99, EXIT_JOB_ERROR = 100, MAX_FRAME = 1 << 20, MAX_ARGS = 64 };

static unsigned char frame[MAX_FRAME + 8];

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

/* One frame: LENGTH(8 hex) TID(8 hex) CODE(4 hex) then " HEXLEN:BYTES" per argument. */
static int send_frame(int fd, unsigned tid, unsigned code, int argc, const char **argv) {
    size_t body = 12;
    for (int i = 0; i < argc; i++) body += 1 + (size_t)snprintf(NULL, 0, "%zx", strlen(argv[i])) + 1 + strlen(argv[i]);
    if (body > MAX_FRAME) return -1;
    size_t p = (size_t)sprintf((char *)frame, "%08zx%08x%04x", body, tid, code);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);
        p += (size_t)sprintf((char *)frame + p, " %zx:", len);
        memcpy(frame + p, argv[i], len);
        p += len;
    }
    return write_all(fd, frame, p);
}

static long hex(const unsigned char *s, int digits) {
    long v = 0;
    for (int i = 0; i < digits; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    return v;
}

/* Reads one frame; its arguments become NUL-terminated strings inside `frame`. Returns the code. */
static int read_frame(int fd, unsigned *tid, int *argc, char **argv) {
    unsigned char head[8];
    if (read_all(fd, head, 8) < 0) return -1;
    long len = hex(head, 8);
    if (len < 12 || len > MAX_FRAME) return -1;
    if (read_all(fd, frame, (size_t)len) < 0) return -1;
    long t = hex(frame, 8), code = hex(frame + 8, 4);
    if (t < 0 || code < 0) return -1;
    *tid = (unsigned)t;
    *argc = 0;
    long p = 12;
    while (p < len && *argc < MAX_ARGS) {
        if (frame[p] != ' ') return -1;
        long q = p + 1;
        while (q < len && frame[q] != ':') q++;
        if (q >= len || q - p - 1 < 1 || q - p - 1 > 8) return -1;
        long alen = hex(frame + p + 1, (int)(q - p - 1));
        if (alen < 0 || q + 1 + alen > len) return -1;
        memmove(frame + p, frame + q + 1, (size_t)alen); /* shift the bytes left to make room for the NUL */
        frame[p + alen] = '\0';
        argv[(*argc)++] = (char *)frame + p;
        p = q + 1 + alen;
    }
    return (int)code;
}

/* JSON string body of s (quotes, backslashes and control characters escaped). */
static void json_string(char *out, size_t cap, const char *s) {
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { out[o++] = '\\'; out[o++] = (char)c; }
        else if (c < 0x20) o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
        else out[o++] = (char)c;
    }
    out[o] = '\0';
}

static int connect_daemon(void) {
    const char *path = getenv("RSMAP_SOCKET");
    if (!path || !*path) path = "/run/rsmap/rsmapd.sock";
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) return -1;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { close(fd); return -1; }
    return fd;
}

/* Sends a command and waits for its OK or ERROR; STATE arguments after the first are KEY=VALUE lines. */
static int call(int fd, unsigned tid, unsigned code, int argc, const char **argv, FILE *env, char *why, size_t cap) {
    if (send_frame(fd, tid, code, argc, argv) < 0) return -1;
    for (;;) {
        unsigned t;
        int n;
        char *args[MAX_ARGS];
        int c = read_frame(fd, &t, &n, args);
        if (c < 0 || t != tid) return -1;
        if (c == OK) return OK;
        if (c == ERROR) {
            snprintf(why, cap, "%s", n > 0 ? args[0] : "(no reason given)");
            return ERROR;
        }
        for (int i = 1; i < n && env; i++) fprintf(env, "%s\n", args[i]);
    }
}

extern char **environ;

/* starter: drop every SGE_HGR_* the job brought along (seed 002: set by the execution daemon alone), set
 * the granted ones from $SGE_JOB_SPOOL_DIR/rsmap.env, and exec the job. */
static int starter(char **cmd) {
    static char *env[4096];
    static char lines[65536];
    int n = 0;
    for (char **e = environ; *e && n < 4000; e++) {
        if (strncmp(*e, "SGE_HGR_", 8) != 0) env[n++] = *e;
    }
    const char *dir = getenv("SGE_JOB_SPOOL_DIR");
    char path[4096];
    if (dir && *dir && snprintf(path, sizeof path, "%s/rsmap.env", dir) < (int)sizeof path) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t used = 0;
            while (n < 4090 && used + 2 < sizeof lines && fgets(lines + used, (int)(sizeof lines - used), f)) {
                size_t len = strlen(lines + used);
                if (len > 0 && lines[used + len - 1] == '\n') lines[used + len - 1] = '\0';
                if (strncmp(lines + used, "SGE_HGR_", 8) == 0) env[n++] = lines + used; /* ours only */
                used += len + 1;
            }
            fclose(f);
        }
    }
    env[n] = NULL;
    execvpe(cmd[0], cmd, env);
    fprintf(stderr, "rsmap-hook: cannot exec %s: %s\n", cmd[0], strerror(errno));
    return 127;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "starter")) return starter(argv + 2);
    if (argc != 2 || (strcmp(argv[1], "prolog") && strcmp(argv[1], "epilog"))) {
        fprintf(stderr, "usage: rsmap-hook prolog|epilog|starter COMMAND...\n");
        return 2;
    }
    int prolog = !strcmp(argv[1], "prolog");
    const char *job = getenv("JOB_ID"), *task = getenv("SGE_TASK_ID"), *slots = getenv("NSLOTS");
    const char *request = getenv("RSMAP_REQUEST");
    if (!job || !*job) {
        fprintf(stderr, "rsmap-hook: JOB_ID is not set: run me from sge_execd\n");
        return prolog ? EXIT_JOB_ERROR : 1;
    }
    if (prolog && (!request || !*request)) return 0; /* the job requests no resource map */
    int fd = connect_daemon();
    if (fd < 0) {
        fprintf(stderr, "rsmap-hook: cannot reach rsmapd: %s\n", strerror(errno));
        return prolog ? EXIT_RESCHEDULE : 1;
    }
    char why[4096] = "", ej[256], et[256], er[65536];
    static char arg[70000];
    const char *version[] = { "1" };
    if (call(fd, 1, INIT, 1, version, NULL, why, sizeof why) != OK) {
        fprintf(stderr, "rsmap-hook: rsmapd refused INIT: %s\n", why);
        return prolog ? EXIT_RESCHEDULE : 1;
    }
    json_string(ej, sizeof ej, job);
    json_string(et, sizeof et, task ? task : "undefined");
    const char *a[] = { arg };
    if (prolog) {
        json_string(er, sizeof er, request);
        snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\",\"slots\":%d,\"request\":\"%s\"}", ej, et,
                 slots ? atoi(slots) : 1, er);
        const char *dir = getenv("SGE_JOB_SPOOL_DIR");
        char envfile[4096];
        FILE *env = stdout;
        if (dir && *dir && snprintf(envfile, sizeof envfile, "%s/rsmap.env", dir) < (int)sizeof envfile) {
            env = fopen(envfile, "w");
            if (!env) {
                fprintf(stderr, "rsmap-hook: cannot write %s: %s\n", envfile, strerror(errno));
                return EXIT_RESCHEDULE;
            }
        }
        int r = call(fd, 2, JOB_START, 1, a, env, why, sizeof why);
        if (env != stdout && fclose(env) != 0) r = -1;
        if (r == OK) return 0;
        if (r < 0) {
            fprintf(stderr, "rsmap-hook: lost rsmapd during JOB_START\n");
            return EXIT_RESCHEDULE;
        }
        fprintf(stderr, "rsmap-hook: %s\n", why);
        /* A request that does not parse is the job's fault; anything else may work on another host. */
        return strncmp(why, "request:", 8) == 0 ? EXIT_JOB_ERROR : EXIT_RESCHEDULE;
    }
    snprintf(arg, sizeof arg, "{\"job\":\"%s\",\"task\":\"%s\"}", ej, et);
    int r = call(fd, 2, JOB_END, 1, a, NULL, why, sizeof why);
    if (r < 0) {
        fprintf(stderr, "rsmap-hook: lost rsmapd during JOB_END\n");
        return 1;
    }
    if (r == ERROR) fprintf(stderr, "rsmap-hook: %s\n", why); /* nothing held: the grant is gone anyway */
    return 0;
}
