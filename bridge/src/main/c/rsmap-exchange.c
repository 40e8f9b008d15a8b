/* rsmap-exchange: the one exchange of every C client (rsmap-hook, rsmap-shell, the SPANK plugin): connect
 * with the server's peer check, INIT and one command sent together, the answer read up to its OK or ERROR,
 * all within one deadline; retried only where the command is idempotent (docs/protocol.md, "Clients"). */
#include "rsmap-client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TID_INIT = 1, TID_COMMAND = 2, TRIES = 3 };

int rsmap_timeout_ms(int standard) {
    const char *e = getenv("RSMAP_TIMEOUT");
    char *end;
    long s = e && *e ? strtol(e, &end, 10) : 0;
    if (s > 0 && *end == '\0' && s < standard / 1000) return (int)s * 1000;
    return standard;
}

static const char *command_name(unsigned code) {
    switch (code) {
    case RSMAP_JOB_START: return "JOB_START";
    case RSMAP_JOB_END: return "JOB_END";
    case RSMAP_JOB_ENTER: return "JOB_ENTER";
    case RSMAP_QUERY: return "QUERY";
    case RSMAP_REALLOC: return "REALLOC";
    case RSMAP_RELEASE: return "RELEASE";
    case RSMAP_REALLOC_CANCEL: return "REALLOC_CANCEL";
    case RSMAP_PLACE: return "PLACE";
    default: return "the command";
    }
}

/* One try: RSMAP_OK, RSMAP_ERROR or one of the negative codes; why says. */
static int once(const struct rsmap_request *r, long long deadline, struct rsmap_outcome *out) {
    char *why = out->why;
    size_t cap = sizeof out->why;
    int fd = rsmap_connect_by(r->socket, deadline, why, cap);
    if (fd < 0) return errno == EPERM ? RSMAP_UNTRUSTED : RSMAP_UNREACHABLE;
    if (r->after_connect && r->after_connect(r->ctx, why, cap) != 0) {
        close(fd);
        return RSMAP_UNREACHABLE;
    }
    /* INIT sent with the command, without waiting: one round trip less in the job path (frames are
     * answered in order; the PTP proxy protocol lets a client send commands before earlier ones are answered). */
    const char *version[] = { "1" }, *argv[] = { r->arg };
    const char *during = "INIT";
    char refused[1024] = "";
    int s = -1, sent = 0;
    if (rsmap_send_by(fd, deadline, TID_INIT, RSMAP_INIT, 1, version) == 0 &&
        rsmap_send_by(fd, deadline, TID_COMMAND, r->code, 1, argv) == 0) {
        sent = 1;
        s = rsmap_finish_by(fd, deadline, TID_INIT, NULL, NULL, refused, sizeof refused, NULL);
        if (s == RSMAP_OK) {
            during = command_name(r->code);
            s = rsmap_finish_by(fd, deadline, TID_COMMAND, r->on_event, r->ctx, why, cap, &out->category);
        } else if (s == RSMAP_ERROR) {
            snprintf(why, cap, "rsmapd refused INIT: %s", refused);
            s = RSMAP_INIT_REFUSED;
        }
    }
    /* Every failing call above set errno (rsmap-client.c): what it says is this try's, never left over. */
    int e = errno;
    close(fd);
    if (s == RSMAP_OK || s == RSMAP_ERROR || s == RSMAP_INIT_REFUSED) return s;
    if (e == EMSGSIZE) {
        /* Final: the same bytes would be too many again, and a retry would only hold the caller longer. */
        if (sent) snprintf(why, cap, "the answer to %s exceeds the protocol's %d MiB frame bound", during,
                           RSMAP_MAX_FRAME >> 20);
        else snprintf(why, cap, "the argument of %s is over the protocol's %d MiB frame bound: not sent",
                      command_name(r->code), RSMAP_MAX_FRAME >> 20);
        return RSMAP_TOO_LARGE;
    }
    if (e == EAGAIN || e == EWOULDBLOCK) {
        snprintf(why, cap, "rsmapd did not answer %s within %d s", during, (r->timeout_ms + 999) / 1000);
        return RSMAP_TIMED_OUT;
    }
    snprintf(why, cap, "lost rsmapd during %s", during);
    return RSMAP_LOST;
}

/* JOB_START, JOB_END and QUERY once more after a lost answer: rsmapd may have done it and died before it
 * answered, and each is idempotent there (the same grant again for the same request; OK for a job that
 * holds nothing). Between tries rsmapd may be restarting: unreachable then is tried again too. The pauses
 * (1 s, then 2 s: rsmapd restarts within RestartSec=2s) count against the one deadline. */
void rsmap_exchange(const struct rsmap_request *r, struct rsmap_outcome *out) {
    long long deadline = rsmap_now_ms() + r->timeout_ms;
    out->category = RSMAP_CAT_NONE;
    out->why[0] = '\0';
    out->tries = 1;
    out->status = once(r, deadline, out);
    while (r->idempotent && out->tries < TRIES &&
           (out->status == RSMAP_LOST || (out->tries > 1 && out->status == RSMAP_UNREACHABLE))) {
        long long pause = 1000LL * out->tries;
        if (rsmap_now_ms() + pause >= deadline) break;
        usleep((useconds_t)(pause * 1000));
        if (r->reset) r->reset(r->ctx);
        out->why[0] = '\0';
        out->tries++;
        out->status = once(r, deadline, out);
    }
    if (out->tries > 1 && out->status < 0) {
        size_t n = strlen(out->why);
        snprintf(out->why + n, sizeof out->why - n, " (%d tries)", out->tries);
    }
}
