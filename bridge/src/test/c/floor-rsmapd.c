/* the daemon and its protocol benchmark: the floor of a job start on this machine. A single-threaded C
 * server doing the least a granting daemon must do per hook, with nothing else: accept, INIT answered,
 * JOB_START and JOB_END each appended to a journal (zero-filled ahead, as rsmapd's) and fdatasync'ed before
 * the answer, STATE and OK sent, the job's environment file created after the answer (O_EXCL, 0400, then
 * chown, as rsmapd makes it) or removed.
 * No decision, no JSON, no threads. hook-timing against it says what the socket, the disk and a process
 * cost here, beside what rsmapd adds (docs/benchmarks.md).
 * Usage: floor-rsmapd SOCKET DIR   (DIR: where the journal and env/ go, on the disk under test) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "stub-serve.h"

enum { AHEAD = 1 << 20 };

/* The job id of a JOB_START or JOB_END argument: {"job":"ID",...}; "" when there is none. */
static void job_of(const char *arg, char *id, size_t cap) {
    const char *p = strstr(arg, "\"job\":\"");
    id[0] = '\0';
    if (!p) return;
    p += 7;
    size_t n = 0;
    while (p[n] && p[n] != '"' && p[n] != '/' && n + 1 < cap) n++;
    memcpy(id, p, n);
    id[n] = '\0';
}

/* The journal and environment directory of the server, for stub_serve. */
struct floor {
    int journal;
    long at;
    const char *path, *env;
};

static int command(int c, unsigned tid, int code, int n, char **args, void *ctx) {
    struct floor *f = ctx;
    char id[64], record[512], file[4200];
    job_of(n > 0 ? args[0] : "", id, sizeof id);
    int len = snprintf(record, sizeof record, "%08x %s %s\n", (unsigned)code, id, n > 0 ? args[0] : "");
    if (len > (int)sizeof record - 1) len = (int)sizeof record - 1;
    if (f->at + len > AHEAD) f->at = 0; /* round and round the zero-filled space: the same blocks */
    if (pwrite(f->journal, record, (size_t)len, f->at) != len || fdatasync(f->journal) < 0) {
        perror(f->path);
        exit(1);
    }
    f->at += len;
    snprintf(file, sizeof file, "%s/%s", f->env, id);
    if (code == RSMAP_JOB_START) {
        const char *state[] = { "{\"grants\":{}}", "SGE_HGR_nic=ib0" };
        rsmap_send(c, tid, RSMAP_STATE, 2, state);
        rsmap_send(c, tid, RSMAP_OK, 0, NULL);
        /* after the answer, as rsmapd: nothing reads it before the job's JOB_ENTER */
        int e = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
        if (e >= 0) {
            (void)!write(e, "SGE_HGR_nic=ib0\n", 16);
            close(e);
            (void)!chown(file, 0, (gid_t)-1);
        }
    } else {
        unlink(file);
        rsmap_send(c, tid, RSMAP_OK, 0, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: floor-rsmapd SOCKET DIR\n");
        return 2;
    }
    char path[4096], env[4096];
    snprintf(path, sizeof path, "%s/journal", argv[2]);
    snprintf(env, sizeof env, "%s/env", argv[2]);
    mkdir(argv[2], 0700);
    mkdir(env, 0711);
    int j = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    static char zeros[AHEAD];
    if (j < 0 || pwrite(j, zeros, AHEAD, 0) != AHEAD || fdatasync(j) < 0) {
        perror(path);
        return 1;
    }
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    unlink(argv[1]);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0) {
        perror(argv[1]);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    struct floor f = { j, 0, path, env };
    for (;;) {
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        stub_serve(c, command, &f);
        close(c);
    }
}
