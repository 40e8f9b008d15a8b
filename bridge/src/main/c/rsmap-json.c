/* rsmap-json: the one JSON builder of the C clients (rsmap-hook, rsmap-shell, the SPANK plugin): a command's
 * argument, an object of strings, numbers and JSON already written, grown as needed, never cut. */
#include "rsmap-client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(struct rsmap_json *j, const char *s, size_t n) {
    if (j->failed) return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = (j->len + n + 1) * 2;
        char *grown = realloc(j->s, cap);
        if (!grown) {
            j->failed = 1;
            return;
        }
        j->s = grown;
        j->cap = cap;
    }
    memcpy(j->s + j->len, s, n);
    j->len += n;
    j->s[j->len] = '\0';
}

static void puts_(struct rsmap_json *j, const char *s) {
    put(j, s, strlen(s));
}

static void key(struct rsmap_json *j, const char *k) {
    puts_(j, j->len > 1 ? ",\"" : "\"");
    puts_(j, k);
    puts_(j, "\":");
}

void rsmap_json_begin(struct rsmap_json *j) {
    *j = (struct rsmap_json){ 0 };
    puts_(j, "{");
}

void rsmap_json_str(struct rsmap_json *j, const char *k, const char *value) {
    size_t cap = 6 * strlen(value) + 8; /* \u00XX is the longest escape, 6 bytes for one */
    char *body = malloc(cap);
    if (!body || rsmap_json_string(body, cap, value) < 0) {
        j->failed = 1;
        free(body);
        return;
    }
    key(j, k);
    puts_(j, "\"");
    puts_(j, body);
    puts_(j, "\"");
    free(body);
}

void rsmap_json_int(struct rsmap_json *j, const char *k, long n) {
    char digits[32];
    snprintf(digits, sizeof digits, "%ld", n);
    key(j, k);
    puts_(j, digits);
}

void rsmap_json_raw(struct rsmap_json *j, const char *k, const char *json) {
    key(j, k);
    puts_(j, json);
}

char *rsmap_json_end(struct rsmap_json *j) {
    puts_(j, "}");
    if (j->failed) {
        free(j->s);
        j->s = NULL;
    }
    return j->s;
}
