/* stub-json: a recursive-descent JSON reader (RFC 8259) for the stand-ins' description files, with a
 * depth limit so a hostile file cannot exhaust the stack. */
#include "stub-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct reader {
    const char *s;
    size_t at;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct reader *r, const char *what) {
    if (!r->failed) snprintf(r->err, r->errlen, "%s at byte %zu", what, r->at);
    r->failed = 1;
}

static void skip_space(struct reader *r) {
    while (r->s[r->at] == ' ' || r->s[r->at] == '\t' || r->s[r->at] == '\n' || r->s[r->at] == '\r') r->at++;
}

static struct json *node(enum json_kind kind) {
    struct json *v = calloc(1, sizeof *v);
    if (v) v->kind = kind;
    return v;
}

static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static char *read_string(struct reader *r) {
    size_t cap = 32, len = 0;
    char *out = malloc(cap);
    if (!out) { fail(r, "out of memory"); return NULL; }
    r->at++; /* the opening quote */
    for (;;) {
        unsigned char c = (unsigned char)r->s[r->at];
        if (c == '\0') { fail(r, "unterminated string"); free(out); return NULL; }
        if (c < 0x20) { fail(r, "control character in string"); free(out); return NULL; }
        if (len + 5 > cap) {
            cap *= 2;
            char *grown = realloc(out, cap);
            if (!grown) { fail(r, "out of memory"); free(out); return NULL; }
            out = grown;
        }
        r->at++;
        if (c == '"') break;
        if (c != '\\') { out[len++] = (char)c; continue; }
        char e = r->s[r->at++];
        switch (e) {
        case '"': out[len++] = '"'; break;
        case '\\': out[len++] = '\\'; break;
        case '/': out[len++] = '/'; break;
        case 'b': out[len++] = '\b'; break;
        case 'f': out[len++] = '\f'; break;
        case 'n': out[len++] = '\n'; break;
        case 'r': out[len++] = '\r'; break;
        case 't': out[len++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = hex(r->s[r->at]);
                if (h < 0) { fail(r, "bad \\u escape"); free(out); return NULL; }
                cp = cp * 16 + (unsigned)h;
                r->at++;
            }
            /* Surrogates are kept as they are encoded: the descriptions hold no astral characters. */
            if (cp < 0x80) out[len++] = (char)cp;
            else if (cp < 0x800) { out[len++] = (char)(0xC0 | cp >> 6); out[len++] = (char)(0x80 | (cp & 0x3F)); }
            else {
                out[len++] = (char)(0xE0 | cp >> 12);
                out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[len++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: fail(r, "bad escape"); free(out); return NULL;
        }
    }
    out[len] = '\0';
    return out;
}

static struct json *read_value(struct reader *r, int depth);

static int append(struct json *v, char *key, struct json *item) {
    char **keys = v->kind == JSON_OBJECT ? realloc(v->keys, (v->n + 1) * sizeof *keys) : NULL;
    if (v->kind == JSON_OBJECT) {
        if (!keys) return -1;
        v->keys = keys;
        keys[v->n] = key;
    }
    struct json **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items) return -1;
    v->items = items;
    items[v->n++] = item;
    return 0;
}

static struct json *read_container(struct reader *r, int depth, int object) {
    struct json *v = node(object ? JSON_OBJECT : JSON_ARRAY);
    if (!v) { fail(r, "out of memory"); return NULL; }
    char close = object ? '}' : ']';
    r->at++;
    skip_space(r);
    if (r->s[r->at] == close) { r->at++; return v; }
    for (;;) {
        char *key = NULL;
        if (object) {
            skip_space(r);
            if (r->s[r->at] != '"') { fail(r, "expected a key"); json_free(v); return NULL; }
            key = read_string(r);
            if (!key) { json_free(v); return NULL; }
            skip_space(r);
            if (r->s[r->at] != ':') { fail(r, "expected ':'"); free(key); json_free(v); return NULL; }
            r->at++;
        }
        struct json *item = read_value(r, depth + 1);
        if (!item || append(v, key, item) != 0) {
            if (item) fail(r, "out of memory");
            free(key);
            json_free(item);
            json_free(v);
            return NULL;
        }
        skip_space(r);
        if (r->s[r->at] == ',') { r->at++; continue; }
        if (r->s[r->at] == close) { r->at++; return v; }
        fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
        json_free(v);
        return NULL;
    }
}

static struct json *read_value(struct reader *r, int depth) {
    if (depth > MAX_DEPTH) { fail(r, "nested too deep"); return NULL; }
    skip_space(r);
    const char *p = r->s + r->at;
    if (*p == '{') return read_container(r, depth, 1);
    if (*p == '[') return read_container(r, depth, 0);
    if (*p == '"') {
        char *s = read_string(r);
        if (!s) return NULL;
        struct json *v = node(JSON_STRING);
        if (!v) { free(s); fail(r, "out of memory"); return NULL; }
        v->string = s;
        return v;
    }
    static const struct { const char *word; enum json_kind kind; int boolean; } words[] = {
        {"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t len = strlen(words[i].word);
        if (strncmp(p, words[i].word, len) == 0) {
            struct json *v = node(words[i].kind);
            if (!v) { fail(r, "out of memory"); return NULL; }
            v->boolean = words[i].boolean;
            r->at += len;
            return v;
        }
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        char *end;
        double d = strtod(p, &end);
        if (end == p) { fail(r, "bad number"); return NULL; }
        struct json *v = node(JSON_NUMBER);
        if (!v) { fail(r, "out of memory"); return NULL; }
        v->number = d;
        r->at += (size_t)(end - p);
        return v;
    }
    fail(r, *p ? "unexpected character" : "unexpected end");
    return NULL;
}

struct json *json_parse(const char *text, char *err, size_t errlen) {
    struct reader r = {text, 0, err, errlen, 0};
    struct json *v = read_value(&r, 0);
    if (!v) return NULL;
    skip_space(&r);
    if (r.s[r.at] != '\0') {
        fail(&r, "trailing characters");
        json_free(v);
        return NULL;
    }
    return v;
}

void json_free(struct json *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys) free(v->keys[i]);
        json_free(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->string);
    free(v);
}

const struct json *json_get(const struct json *v, const char *key) {
    if (!v || v->kind != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0) return v->items[i];
    return NULL;
}

char *json_read_file(const char *path) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap *= 2);
            if (!grown) { free(text); text = NULL; }
            text = grown;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!text || bad) { free(text); return NULL; }
    text[len] = '\0';
    return text;
}

struct json *json_parse_file(const char *path) {
    char *text = json_read_file(path), err[160];
    struct json *d = text ? json_parse(text, err, sizeof err) : NULL;
    free(text);
    return d;
}
