/* stub-serve.h: the connection loop of the tests' stand-in servers (fake-rsmapd, floor-rsmapd): frames read
 * one after another, INIT answered OK, every other command handed to the server's own function. */
#ifndef STUB_SERVE_H
#define STUB_SERVE_H

#include <stdlib.h>

#include "rsmap-client.h"

/* A command other than INIT, with its TID and arguments: 0 to read on, -1 to close the connection. */
typedef int (*stub_command_fn)(int fd, unsigned tid, int code, int argc, char **argv, void *ctx);

/* Serves one connection until the client closes it, a frame cannot be read, or on_command says to close. */
static inline void stub_serve(int fd, stub_command_fn on_command, void *ctx) {
    for (;;) {
        unsigned tid;
        int n;
        char *args[RSMAP_MAX_ARGS], *buf;
        int code = rsmap_read(fd, &tid, &n, args, &buf);
        int r = -1;
        if (code == RSMAP_INIT) r = rsmap_send(fd, tid, RSMAP_OK, 0, NULL) < 0 ? -1 : 0;
        else if (code >= 0) r = on_command(fd, tid, code, n, args, ctx);
        free(buf);
        if (r < 0) return;
    }
}

#endif
