/* rsmap-request: the form of a resource-map request, checked where no complex table is at hand (a
 * submit host), so that a malformed --rsmap is refused before the job is queued. */
#ifndef RSMAP_REQUEST_H
#define RSMAP_REQUEST_H

#include <stddef.h>

/* 0 when `request` has the form of a list of resource-map requests (`name=amount[params],...`,
 * docs/language.md "Requests"); -1 with `column C: problem` in why (the words of rsmap's own parser)
 * when it cannot be one on any host. What needs the complex table (which names exist, their types,
 * expressions in id=) is left to rsmapd at job start: this check never refuses what rsmapd accepts. */
int rsmap_request_check(const char *request, char *why, size_t cap);

#endif
