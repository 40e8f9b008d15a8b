/* json-check: rsmap-jsonread.c's reader alone, for JsonReadIT: reads one JSON text from stdin and prints it
 * back compact (members in their order, strings escaped again, numbers and bools as their text), or one
 * line "error: WHY" and exit 1. Also checks each container's count against its children. */
#include "rsmap-jsonread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int print(const struct rsmap_jv *v) {
    switch (v->type) {
    case RSMAP_JNULL: fputs("null", stdout); return 0;
    case RSMAP_JBOOL:
    case RSMAP_JNUMBER: fputs(v->text, stdout); return 0;
    case RSMAP_JSTRING: str(v->text); return 0;
    default: break;
    }
    int object = v->type == RSMAP_JOBJECT, n = 0;
    putchar(object ? '{' : '[');
    for (const struct rsmap_jv *c = v->child; c; c = c->next) {
        if (n++) putchar(',');
        if (object) {
            str(c->key);
            putchar(':');
        }
        if (print(c) < 0) return -1;
    }
    putchar(object ? '}' : ']');
    return n == v->count ? 0 : -1;
}

int main(void) {
    size_t len = 0, cap = 1 << 16;
    char *s = malloc(cap);
    for (size_t n; s && (n = fread(s + len, 1, cap - len, stdin)) > 0;) {
        len += n;
        if (len == cap) s = realloc(s, cap *= 2);
    }
    if (!s) return 2;
    const char *error = NULL;
    struct rsmap_jdoc *d = rsmap_json_parse(s, len, &error);
    if (!d) {
        printf("error: %s\n", error);
        free(s);
        return 1;
    }
    int r = print(d->root);
    putchar('\n');
    rsmap_json_free(d);
    free(s);
    if (r < 0) fputs("a count differs from its children\n", stderr);
    return r < 0 ? 3 : 0;
}
