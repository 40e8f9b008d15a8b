/* rsmap-request: the table-free part of rsmap's request grammar (docs/language.md "Requests"), in the
 * order and words of plugin/src/main/java/rsmap/request/RequestParser.java, which stays the authority:
 * a test runs both on the same inputs (RequestCheckIT) and holds this one to never refusing what the
 * Java parser accepts. */
#include "rsmap-request.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MAX_INPUT = 4 << 20, MAX_TOKEN = 4096, MAX_DEPTH = 64, MAX_ENTRIES = 256 };

struct in {
    const char *s;
    size_t len, pos;
    char *why;
    size_t cap;
};

/* Java's Character.isWhitespace || isSpaceChar, for ASCII (other bytes are left to rsmapd). */
static int blank(char c) {
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

static int fail(struct in *in, size_t at, const char *fmt, ...) {
    int n = snprintf(in->why, in->cap, "column %zu: ", at + 1);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < in->cap) vsnprintf(in->why + n, in->cap - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_blank(struct in *in) {
    while (in->pos < in->len && blank(in->s[in->pos])) in->pos++;
}

/* A name runs to one of "=,[]" or a blank. */
static size_t name_end(const struct in *in, size_t from) {
    while (from < in->len && !strchr("=,[]", in->s[from]) && !blank(in->s[from])) from++;
    return from;
}

/* The ']' closing a character class opening at `at`, as rsmap's Glob reads it, or 0. */
static size_t class_end(const struct in *in, size_t at) {
    size_t i = at + 1;
    if (i < in->len && in->s[i] == '!') i++;
    if (i < in->len && in->s[i] == ']') i++; /* a leading ']' is a member */
    for (; i < in->len; i++) {
        char c = in->s[i];
        if (c == '\\') i++;
        else if (c == ']') return i;
        else if (c == ',' || blank(c)) return 0;
    }
    return 0;
}

/* Where a parameter value ends: at ',' or ']' outside brackets and parentheses; a backslash protects
 * the next character. -1 (why set) when brackets nest too deep. */
static long value_end(struct in *in) {
    char open[MAX_DEPTH];
    int depth = 0;
    for (size_t i = in->pos; i < in->len; i++) {
        char c = in->s[i];
        if (c == '\\' && i + 1 < in->len) {
            i++;
            continue;
        }
        if (depth == 0 && (c == ',' || c == ']')) return (long)i;
        char top = depth == 0 ? 0 : open[depth - 1];
        if (c == '[') {
            size_t close = class_end(in, i);
            if (close > 0) {
                i = close;
                continue;
            }
        }
        if (c == '[' || c == '(') {
            if (depth >= MAX_DEPTH) return fail(in, i, "brackets nested deeper than %d levels", MAX_DEPTH);
            open[depth++] = c;
        } else if ((c == ']' && top == '[') || (c == ')' && top == '(')) {
            depth--;
        } else if (c == ']' && top == '(') {
            return (long)i; /* the list closes over an unclosed '(': rsmapd's expression parser says which */
        }
    }
    return (long)in->len;
}

static int same_text(const struct in *in, size_t a, size_t alen, size_t b, size_t blen) {
    return alen == blen && memcmp(in->s + a, in->s + b, alen) == 0;
}

static int parameters(struct in *in) {
    size_t open = in->pos++;
    size_t seen_at[MAX_ENTRIES], seen_len[MAX_ENTRIES];
    int seen = 0, has_same = 0;
    long scope_at = -1;
    skip_blank(in);
    if (in->pos < in->len && in->s[in->pos] == ']') return fail(in, open, "empty parameter list");
    for (;;) {
        skip_blank(in);
        size_t at = in->pos, end = name_end(in, at), len = end - at;
        in->pos = end;
        if (in->pos == in->len) return fail(in, open, "'[' without a matching ']'");
        if (len == 0) return fail(in, in->pos, "expected a parameter name, found '%c'", in->s[in->pos]);
        skip_blank(in);
        if (in->pos == in->len || in->s[in->pos] != '=')
            return fail(in, in->pos, "expected '=' after parameter '%.*s'", (int)len, in->s + at);
        in->pos++;
        skip_blank(in);
        size_t vstart = in->pos;
        long e = value_end(in);
        if (e < 0) return -1;
        size_t vend = (size_t)e;
        if (vend == in->len) return fail(in, open, "'[' without a matching ']'");
        size_t trimmed = vend;
        while (trimmed > vstart && blank(in->s[trimmed - 1])) trimmed--;
        if (vstart == trimmed) return fail(in, vstart, "expected a value for parameter '%.*s'", (int)len, in->s + at);
        for (size_t i = vstart; i < trimmed; i++) {
            if (blank(in->s[i]))
                return fail(in, i, "whitespace inside the value of parameter '%.*s'", (int)len, in->s + at);
        }
        if (trimmed - vstart > MAX_TOKEN) return fail(in, vstart, "value longer than %d characters", MAX_TOKEN);
        const char *v = in->s + vstart;
        size_t vlen = trimmed - vstart;
        int reserved = 0;
        if (len == 5 && !memcmp(in->s + at, "scope", 5)) {
            reserved = 1;
            scope_at = (long)at;
            /* scope= is checked below, once its place in the order of refusals is known */
        } else if (len == 4 && !memcmp(in->s + at, "same", 4)) {
            reserved = 1;
            has_same = 1;
        } else if (len == 2 && !memcmp(in->s + at, "id", 2)) {
            reserved = 1;
        } else if (len == 8 && !memcmp(in->s + at, "distinct", 8)) {
            return fail(in, at, "distinct= is reserved for a constraint which is not implemented");
        } else if (len == 4 && !memcmp(in->s + at, "bind", 4)) {
            return fail(in, at, "bind= is reserved and has no meaning yet");
        }
        for (int k = 0; k < seen; k++) {
            if (same_text(in, seen_at[k], seen_len[k], at, len)) {
                /* Only a reserved name is certainly the same parameter twice: a characteristic may be
                 * written once by name and once by shortcut, which only the table tells apart. */
                if (reserved) return fail(in, at, "parameter '%.*s' is given twice", (int)len, in->s + at);
                return 0; /* rsmapd words it (and may refuse an earlier characteristic first) */
            }
        }
        if (reserved && len == 5 && !((vlen == 4 && !memcmp(v, "host", 4)) || (vlen == 3 && !memcmp(v, "job", 3))))
            return fail(in, vstart, "scope= takes host or job, not '%.*s'", (int)vlen, v);
        if (!reserved) return 0; /* a characteristic: its name and value need the complex table */
        if (len == 2 || (len == 4 && !(vlen == 2 && !memcmp(v, "id", 2)))) {
            /* id= is an expression and same=NAME names a complex: both need rsmapd's parser or table,
             * and a refusal there would come first; the rest is checked only if nothing can precede it. */
            return 0;
        }
        if (seen < MAX_ENTRIES) {
            seen_at[seen] = at;
            seen_len[seen++] = len;
        }
        in->pos = vend;
        if (in->s[in->pos] == ']') {
            in->pos++;
            break;
        }
        in->pos++; /* ',' */
    }
    if (scope_at >= 0 && !has_same) return fail(in, (size_t)scope_at, "scope= needs same=");
    return 1;
}

/* One entry; 1 when fully checked, 0 when the rest needs the table (stop checking, accept), -1 refused. */
static int entry(struct in *in, size_t *name_at, size_t *name_len) {
    size_t at = in->pos, end = name_end(in, at);
    *name_at = at;
    *name_len = end - at;
    in->pos = end;
    if (end == at) return fail(in, at, "expected a complex name, found '%c'", in->s[at]);
    skip_blank(in);
    if (in->pos == in->len || in->s[in->pos] != '=')
        return fail(in, in->pos, "expected '=' after '%.*s'", (int)*name_len, in->s + at);
    in->pos++;
    skip_blank(in);
    /* --rsmap carries resource-map requests only (docs/integration-slurm.md): an amount, then maybe
     * parameters. Whether the name is a resource map is the table's to say; an amount is not optional. */
    size_t amount_at = in->pos;
    while (in->pos < in->len && in->s[in->pos] >= '0' && in->s[in->pos] <= '9') in->pos++;
    size_t digits = in->pos - amount_at;
    if (digits == 0) return 0; /* rsmapd says "unknown complex" or reads an ordinary value: its words */
    if (digits > 9) return 0; /* "amount ... is too large" for a map; an ordinary INT may take it */
    int zero = 1;
    for (size_t i = amount_at; i < in->pos; i++) zero &= in->s[i] == '0';
    if (zero) return 0; /* "the amount of 'gpu' must be at least 1" names the complex's full name */
    skip_blank(in);
    if (in->pos == in->len || in->s[in->pos] != '[') {
        if (in->pos < in->len && in->s[in->pos] != ',') return 0; /* "unexpected ..." names the full name */
        return 1;
    }
    return parameters(in);
}

int rsmap_request_check(const char *request, char *why, size_t cap) {
    struct in in = { request, strlen(request), 0, why, cap };
    if (cap > 0) why[0] = '\0';
    if (in.len > MAX_INPUT) return fail(&in, MAX_INPUT, "request longer than %d characters", MAX_INPUT);
    for (size_t i = 0; i < in.len; i++) {
        unsigned char c = (unsigned char)request[i];
        /* Continuation lines and non-ASCII blanks move columns the way only rsmapd's parser knows. */
        if (c == '\n' || c == '\r' || c == '\\' || c >= 0x80) return 0;
    }
    size_t names_at[MAX_ENTRIES], names_len[MAX_ENTRIES];
    int n = 0;
    skip_blank(&in);
    if (in.pos == in.len) return fail(&in, in.pos, "empty request");
    for (;;) {
        size_t at, len;
        int r = entry(&in, &at, &len);
        if (r <= 0) return r;
        for (int k = 0; k < n; k++) {
            if (same_text(&in, names_at[k], names_len[k], at, len)) {
                return fail(&in, at, "'%.*s' is requested twice", (int)len, request + at);
            }
        }
        if (n == MAX_ENTRIES) return 0;
        names_at[n] = at;
        names_len[n++] = len;
        skip_blank(&in);
        if (in.pos == in.len) return 0;
        if (request[in.pos] != ',') return 0; /* "unexpected ... after the request for" names the full name */
        in.pos++;
        skip_blank(&in);
        if (in.pos == in.len) return fail(&in, in.pos, "expected a request after ','");
    }
}
