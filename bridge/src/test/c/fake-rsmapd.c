/* fake-rsmapd: a stand-in for rsmapd that any user can run - tests run it as nobody, a job owner's own
 * daemon behind RSMAP_SOCKET - speaking the frames of rsmap-client.c.
 *
 * Usage: fake-rsmapd SOCKET LOG grant [NAME=value...] | refuse REASON [CATEGORY] | hangup N [NAME=value...]
 *   Binds SOCKET (mode 0666), prints "ready" and serves one connection after another: INIT is answered OK;
 *   every other command is appended to LOG as "<code in hex> <argument>" and answered
 *     grant   STATE {"grants":{}} with the NAME=value lines, then OK (what a granting rsmapd sends)
 *     refuse  ERROR REASON, and CATEGORY as its second argument when given (without: an rsmapd older than
 *             the categories)
 *     hangup  for the first N commands nothing: the connection is closed (a daemon that died before it
 *             answered); then as grant.
 *     oversize  a frame header announcing 2 MiB, above the protocol's 1 MiB bound (a client reads no further)
 *     deaf    never accepts, with a listen backlog of 0: once one connection waits in it, the next connect
 *             finds it full (a stopped or stuck daemon whose backlog filled). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "stub-serve.h"

/* What the mode says, for stub_serve. */
struct mode {
    int argc;
    char **argv;
    int hangups, lines;
};

static int command(int c, unsigned tid, int code, int n, char **args, void *ctx) {
    struct mode *m = ctx;
    char **argv = m->argv;
    FILE *log = fopen(argv[2], "a");
    if (log) {
        fprintf(log, "%04x %s\n", (unsigned)code, n > 0 ? args[0] : "");
        fclose(log);
    }
    if (!strcmp(argv[3], "hangup") && m->hangups > 0) {
        m->hangups--;
        return -1;
    }
    if (!strcmp(argv[3], "grant") || !strcmp(argv[3], "hangup")) {
        const char *state[RSMAP_MAX_ARGS] = { "{\"grants\":{}}" };
        int k = 1;
        for (int i = m->lines; i < m->argc && k < RSMAP_MAX_ARGS; i++) state[k++] = argv[i];
        rsmap_send(c, tid, RSMAP_STATE, k, state);
        rsmap_send(c, tid, RSMAP_OK, 0, NULL);
        return 0;
    }
    if (!strcmp(argv[3], "oversize")) {
        char head[21];
        snprintf(head, sizeof head, "%08x%08x%04x", 2u << 20, tid, (unsigned)RSMAP_STATE);
        return write(c, head, 20) == 20 ? 0 : -1;
    }
    if (!strcmp(argv[3], "refuse")) {
        const char *why[] = { m->argc > 4 ? argv[4] : "refused", m->argc > 5 ? argv[5] : "" };
        rsmap_send(c, tid, RSMAP_ERROR, m->argc > 5 ? 2 : 1, why);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: fake-rsmapd SOCKET LOG grant [NAME=value...] | refuse REASON [CATEGORY] | hangup N [NAME=value...] | oversize | deaf\n");
        return 2;
    }
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    unlink(argv[1]);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || chmod(argv[1], 0666) < 0 || listen(s, strcmp(argv[3], "deaf") ? 16 : 0) < 0) {
        perror(argv[1]);
        return 1;
    }
    int hangups = !strcmp(argv[3], "hangup") && argc > 4 ? atoi(argv[4]) : 0, lines = !strcmp(argv[3], "hangup") ? 5 : 4;
    printf("ready\n");
    fflush(stdout);
    while (!strcmp(argv[3], "deaf")) pause();
    struct mode m = { argc, argv, hangups, lines };
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        stub_serve(c, command, &m);
        close(c);
    }
}
