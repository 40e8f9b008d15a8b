/* slots-check: rsmap_slurm_slots over stdin, one "CPUS|NODELIST|NODE" per line ("-" for unset); prints
 * the slots per line, for SlurmSlotsTest. */
#include <stdio.h>
#include <string.h>

#include "slurm-slots.h"

static const char *arg(char *s) {
    return strcmp(s, "-") == 0 ? NULL : s;
}

int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = line, *b = strchr(a, '|'), *c = b ? strchr(b + 1, '|') : NULL;
        if (!c) {
            puts("bad line");
            continue;
        }
        *b++ = '\0';
        *c++ = '\0';
        printf("%d\n", rsmap_slurm_slots(arg(a), arg(b), arg(c)));
        fflush(stdout);
    }
    return 0;
}
