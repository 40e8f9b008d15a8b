/* rsmap-jsonread: reads one JSON text into a tree (rsmap-jsonread.c) for the C clients that print what
 * rsmapd answered (rsmap-place). Values live in the document until rsmap_json_free. */
#ifndef RSMAP_JSONREAD_H
#define RSMAP_JSONREAD_H

#include <stddef.h>

enum { RSMAP_JSON_DEPTH = 64 };

enum rsmap_jtype { RSMAP_JNULL, RSMAP_JBOOL, RSMAP_JNUMBER, RSMAP_JSTRING, RSMAP_JARRAY, RSMAP_JOBJECT };

struct rsmap_jv {
    enum rsmap_jtype type;
    const char *key;  /* a member's name, in an object */
    const char *text; /* a string decoded; a number's or a bool's text */
    double number;
    int count;        /* members or elements */
    struct rsmap_jv *child, *next;
};

struct rsmap_jdoc {
    struct rsmap_jv *root;
    struct rsmap_jblock *blocks; /* where the values live (rsmap-jsonread.c) */
    char *text;
};

/* The tree of s[0..len), or NULL with the reason in *error (a static string). */
struct rsmap_jdoc *rsmap_json_parse(const char *s, size_t len, const char **error);
void rsmap_json_free(struct rsmap_jdoc *doc);

/* A member of an object, the i-th element of a list: NULL where there is none (or v is not one). */
const struct rsmap_jv *rsmap_json_get(const struct rsmap_jv *obj, const char *key);
const struct rsmap_jv *rsmap_json_at(const struct rsmap_jv *list, int i);
/* The members of an object or elements of a list; 0 for anything else or NULL. */
int rsmap_json_count(const struct rsmap_jv *v);
/* The text of a string, number or bool; `otherwise` for anything else or NULL. */
const char *rsmap_json_text(const struct rsmap_jv *v, const char *otherwise);

#endif
