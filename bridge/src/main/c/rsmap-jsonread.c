/* rsmap-jsonread: a small JSON reader for the answers a C client prints (rsmap-place's PLACE answer):
 * the whole text into a tree of values in blocks that grow as values come, strings decoded to UTF-8, numbers
 * kept as their text. Bounded: nesting deeper than RSMAP_JSON_DEPTH, or anything after the value, is an error. */
#include "rsmap-jsonread.h"

#include <stdlib.h>
#include <string.h>

/* Values, a block at a time: a value never moves (children and siblings point at it), so a full block is
 * followed by one twice its size rather than reallocated. The first is small: a PLACE answer of a few
 * hosts is a few dozen values; a slurmctld parses one per filtered submission. */
struct rsmap_jblock {
    struct rsmap_jblock *next;
    size_t used, cap;
    struct rsmap_jv v[];
};

enum { FIRST_BLOCK = 32 };

struct reader {
    const char *s;
    size_t pos, len;
    struct rsmap_jblock *blocks; /* the newest first */
    size_t made, cap;            /* values made; the most the text can hold */
    char *text; /* decoded strings, each NUL-terminated */
    size_t text_used;
    const char *error;
};

static void ws(struct reader *r) {
    while (r->pos < r->len && strchr(" \t\r\n", r->s[r->pos]) && r->s[r->pos]) r->pos++;
}

static struct rsmap_jv *node(struct reader *r, enum rsmap_jtype t) {
    if (r->made == r->cap) {
        r->error = "too many values";
        return NULL;
    }
    struct rsmap_jblock *b = r->blocks;
    if (!b || b->used == b->cap) {
        size_t n = b ? 2 * b->cap : FIRST_BLOCK;
        if (n > r->cap - r->made) n = r->cap - r->made;
        struct rsmap_jblock *grown = malloc(sizeof *grown + n * sizeof grown->v[0]);
        if (!grown) {
            r->error = "out of memory";
            return NULL;
        }
        *grown = (struct rsmap_jblock){ .next = b, .cap = n };
        r->blocks = b = grown;
    }
    r->made++;
    struct rsmap_jv *v = &b->v[b->used++];
    *v = (struct rsmap_jv){ .type = t };
    return v;
}

static void put_utf8(struct reader *r, unsigned long c) {
    char *o = r->text + r->text_used;
    if (c < 0x80) {
        o[0] = (char)c;
        r->text_used += 1;
    } else if (c < 0x800) {
        o[0] = (char)(0xc0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3f));
        r->text_used += 2;
    } else if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        r->text_used += 3;
    } else {
        o[0] = (char)(0xf0 | (c >> 18));
        o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[3] = (char)(0x80 | (c & 0x3f));
        r->text_used += 4;
    }
}

static int hex4(struct reader *r, unsigned long *out) {
    if (r->pos + 4 > r->len) return -1;
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->s[r->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* A string at r->pos (its opening quote): decoded into r->text; the start of its text or NULL. A decoded
 * string is never longer than its JSON form, so the text buffer (as long as the input) always has room. */
static const char *string(struct reader *r) {
    char *start = r->text + r->text_used;
    r->pos++;
    while (r->pos < r->len) {
        unsigned char c = (unsigned char)r->s[r->pos++];
        if (c == '"') {
            r->text[r->text_used++] = '\0';
            return start;
        }
        if (c < 0x20) break;
        if (c != '\\') {
            r->text[r->text_used++] = (char)c;
            continue;
        }
        if (r->pos >= r->len) break;
        char e = r->s[r->pos++];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, e);
        if (e && k) {
            r->text[r->text_used++] = to[k - from];
            continue;
        }
        if (e != 'u') break;
        unsigned long cp, low;
        if (hex4(r, &cp) < 0) break;
        if (cp >= 0xd800 && cp < 0xdc00) {
            if (r->pos + 6 > r->len || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u') break;
            r->pos += 2;
            if (hex4(r, &low) < 0 || low < 0xdc00 || low > 0xdfff) break;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
            break;
        }
        if (cp == 0) break; /* a NUL would cut the C string: refused rather than silently shortened */
        put_utf8(r, cp);
    }
    r->error = "a string that does not read";
    return NULL;
}

static struct rsmap_jv *value(struct reader *r, int depth);

/* Members or elements up to `close`, linked as children of v. */
static struct rsmap_jv *items(struct reader *r, struct rsmap_jv *v, char close, int depth) {
    r->pos++;
    ws(r);
    struct rsmap_jv **tail = &v->child;
    if (r->pos < r->len && r->s[r->pos] == close) {
        r->pos++;
        return v;
    }
    for (;;) {
        const char *key = NULL;
        ws(r);
        if (close == '}') {
            if (r->pos >= r->len || r->s[r->pos] != '"') {
                r->error = "an object member without a quoted name";
                return NULL;
            }
            if (!(key = string(r))) return NULL;
            ws(r);
            if (r->pos >= r->len || r->s[r->pos] != ':') {
                r->error = "a member without ':'";
                return NULL;
            }
            r->pos++;
        }
        struct rsmap_jv *item = value(r, depth + 1);
        if (!item) return NULL;
        item->key = key;
        *tail = item;
        tail = &item->next;
        v->count++;
        ws(r);
        if (r->pos < r->len && r->s[r->pos] == ',') {
            r->pos++;
            continue;
        }
        if (r->pos < r->len && r->s[r->pos] == close) {
            r->pos++;
            return v;
        }
        r->error = close == '}' ? "an object not closed by '}'" : "a list not closed by ']'";
        return NULL;
    }
}

static int word(struct reader *r, const char *w) {
    size_t n = strlen(w);
    if (r->pos + n <= r->len && memcmp(r->s + r->pos, w, n) == 0) {
        r->pos += n;
        return 1;
    }
    return 0;
}

static struct rsmap_jv *value(struct reader *r, int depth) {
    if (depth > RSMAP_JSON_DEPTH) {
        r->error = "nested too deeply";
        return NULL;
    }
    ws(r);
    if (r->pos >= r->len) {
        r->error = "the text ends where a value was expected";
        return NULL;
    }
    char c = r->s[r->pos];
    struct rsmap_jv *v;
    if (c == '{' || c == '[') {
        v = node(r, c == '{' ? RSMAP_JOBJECT : RSMAP_JARRAY);
        return v ? items(r, v, c == '{' ? '}' : ']', depth) : NULL;
    }
    if (c == '"') {
        v = node(r, RSMAP_JSTRING);
        return v && (v->text = string(r)) ? v : NULL;
    }
    if (word(r, "true") || word(r, "false")) {
        v = node(r, RSMAP_JBOOL);
        if (v) v->text = r->s[r->pos - 1] == 'e' && r->s[r->pos - 2] == 'u' ? "true" : "false";
        return v;
    }
    if (word(r, "null")) return node(r, RSMAP_JNULL);
    if (c == '-' || (c >= '0' && c <= '9')) {
        size_t start = r->pos;
        r->pos++;
        while (r->pos < r->len && strchr("0123456789.eE+-", r->s[r->pos]) && r->s[r->pos]) r->pos++;
        v = node(r, RSMAP_JNUMBER);
        if (!v) return NULL;
        char *t = r->text + r->text_used;
        memcpy(t, r->s + start, r->pos - start);
        t[r->pos - start] = '\0';
        r->text_used += r->pos - start + 1;
        char *end;
        v->number = strtod(t, &end);
        if (*end != '\0') {
            r->error = "a number that does not read";
            return NULL;
        }
        v->text = t;
        return v;
    }
    r->error = "a character that starts no JSON value";
    return NULL;
}

struct rsmap_jdoc *rsmap_json_parse(const char *s, size_t len, const char **error) {
    /* Every value takes at least one byte of the text: len + 1 values bound node() (the blocks hold only
     * those made: a valid text of N values is at least 2N - 1 bytes). Every decoded string or number fits
     * in the text's length plus its NUL. */
    struct rsmap_jdoc *doc = calloc(1, sizeof *doc);
    struct reader r = { .s = s, .len = len, .cap = len + 1 };
    r.text = doc ? malloc(2 * len + 2) : NULL;
    if (!r.text) {
        free(doc);
        *error = "out of memory";
        return NULL;
    }
    doc->text = r.text;
    struct rsmap_jv *root = value(&r, 0);
    doc->blocks = r.blocks;
    if (root) {
        ws(&r);
        if (r.pos != len) {
            root = NULL;
            r.error = "more text after the value";
        }
    }
    if (!root) {
        *error = r.error;
        rsmap_json_free(doc);
        return NULL;
    }
    doc->root = root;
    return doc;
}

void rsmap_json_free(struct rsmap_jdoc *doc) {
    if (!doc) return;
    for (struct rsmap_jblock *b = doc->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(doc->text);
    free(doc);
}

const struct rsmap_jv *rsmap_json_get(const struct rsmap_jv *obj, const char *key) {
    if (!obj || obj->type != RSMAP_JOBJECT) return NULL;
    for (const struct rsmap_jv *m = obj->child; m; m = m->next) {
        if (strcmp(m->key, key) == 0) return m;
    }
    return NULL;
}

const struct rsmap_jv *rsmap_json_at(const struct rsmap_jv *list, int i) {
    if (!list || list->type != RSMAP_JARRAY) return NULL;
    const struct rsmap_jv *e = list->child;
    while (e && i-- > 0) e = e->next;
    return e;
}

int rsmap_json_count(const struct rsmap_jv *v) {
    return v && (v->type == RSMAP_JARRAY || v->type == RSMAP_JOBJECT) ? v->count : 0;
}

const char *rsmap_json_text(const struct rsmap_jv *v, const char *otherwise) {
    return v && v->text && (v->type == RSMAP_JSTRING || v->type == RSMAP_JNUMBER || v->type == RSMAP_JBOOL)
        ? v->text : otherwise;
}
