/* rsmap-place: the authority's PLACE as `rsmap place` asks it and judges the answer (rsmap-place-ask.c),
 * shared by the rsmap-place executable and the Lua module job_submit.lua loads into slurmctld
 * (rsmap_place.so): reentrant, nothing written to stdout or stderr, nothing kept between calls. */
#ifndef RSMAP_PLACE_H
#define RSMAP_PLACE_H

#include "rsmap-client.h"
#include "rsmap-jsonread.h"

/* rsmap place's exit codes (rsmap(1), "place"). */
enum { RSMAP_PLACE_FITS = 0, RSMAP_PLACE_FAULT = 1, RSMAP_PLACE_REFUSED = 2, RSMAP_PLACE_NONE_FITS = 3 };

/* What to ask: `rsmap place`'s options. NULL for an option not given. */
struct rsmap_place_ask {
    const char *socket; /* NULL: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock */
    const char *filter, *request, *alternatives, *group;
    const char *candidates, *group_values; /* JSON lists of strings, as built from HOST,... */
    long slots;
    int has_slots, whole_hosts;
    int timeout_ms; /* one deadline for everything: connect, every write and read, the retries */
};

/* What came of it. status: rsmap place's exit code. answer/doc: the authority's answer (STATE's JSON) and
 * its tree, on 0 and 3. error: the error line without "error: " ("" on 0 and 3); category: the ERROR's
 * category, or unavailable/internal when no answer came - RSMAP_CAT_NONE where `rsmap place --json`
 * prints no line (a refused argument, an ERROR without a category, an answer that is not JSON). */
struct rsmap_place_answer {
    int status;
    char *answer;
    struct rsmap_jdoc *doc;
    enum rsmap_category category;
    char error[sizeof ((struct rsmap_outcome *)0)->why + 64];
};

/* Asks; fills *out (release it with rsmap_place_free) and returns out->status. */
int rsmap_place_ask(const struct rsmap_place_ask *a, struct rsmap_place_answer *out);
void rsmap_place_free(struct rsmap_place_answer *out);

/* The one line `rsmap place --json` prints, without its newline: the answer itself, or
 * {"error":"...","category":"..."}; NULL where it prints none, or memory ran out. free() it. */
char *rsmap_place_json(const struct rsmap_place_answer *out);

#endif
