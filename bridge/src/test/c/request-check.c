/* request-check: rsmap_request_check over stdin, one request per line; prints "ok" or "refused <why>"
 * per line, for RequestCheckIT to hold against the Java parser. */
#include <stdio.h>
#include <string.h>

#include "rsmap-request.h"

int main(void) {
    static char line[1 << 16];
    char why[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (rsmap_request_check(line, why, sizeof why) == 0) puts("ok");
        else printf("refused %s\n", why);
        fflush(stdout);
    }
    return 0;
}
