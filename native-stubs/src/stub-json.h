/* stub-json: a small JSON reader (RFC 8259) into a tree, for the stand-ins' description files; no
 * dependency. Numbers are doubles; strings are UTF-8 with their escapes decoded (\uXXXX to UTF-8). */
#ifndef STUB_JSON_H
#define STUB_JSON_H

#include <stddef.h>

/* Not part of a library that links it (the NVML stand-in exports nvml.h's names only). */
#pragma GCC visibility push(hidden)

enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
    enum json_kind kind;
    int boolean;
    double number;
    char *string;          /* JSON_STRING */
    size_t n;              /* JSON_ARRAY, JSON_OBJECT: how many items */
    char **keys;           /* JSON_OBJECT: the key of each item */
    struct json **items;   /* JSON_ARRAY, JSON_OBJECT */
};

/* Parses text; NULL on a syntax error, with what and the byte offset in err. */
struct json *json_parse(const char *text, char *err, size_t errlen);
void json_free(struct json *v);
/* The member named key of an object, or NULL (also when v is not an object). */
const struct json *json_get(const struct json *v, const char *key);
/* A file's whole text, NUL-terminated (malloc'd); NULL for a NULL path or a file that cannot be read whole. */
char *json_read_file(const char *path);
/* json_parse of a file's text; NULL where json_read_file or json_parse fails (the caller says nothing). */
struct json *json_parse_file(const char *path);

#pragma GCC visibility pop

#endif
