/* spank_rsmap: what the plugin's two halves share - the submitting side (spank_rsmap.c: options, their
 * form) and the node side (spank_rsmap_node.c: prolog, tasks, epilog). */
#ifndef SPANK_RSMAP_H
#define SPANK_RSMAP_H

#include <stddef.h>

enum { WHY = 4096, REQUEST_MAX = 65536, FILTER_MAX = 65536 /* rsmap.Limits.maxFilterChars */ };

/* plugstack.conf's socket= (empty: $RSMAP_SOCKET, else /run/rsmap/rsmapd.sock), spool= and timeout= */
extern char spank_socket[1024];
extern char spank_spool[1024];
extern int spank_timeout_s;

/* Reads the plugstack.conf arguments; -1 (said with slurm_error) on one it does not know. */
int spank_configure(int ac, char **av);

/* Alternatives: 'gpu=4 || gpu=2'. Each part of a request, trimmed, into part; the next one after *at, or
 * NULL when none is left. */
const char *spank_next_alternative(const char *at, char *part, size_t cap);

#endif
