/* rsmap-place: `rsmap place` without a JVM, for what runs at every submission (Slurm's job_submit.lua,
 * the OCS JSV): PLACE to the authority's socket with the same options, output and exit codes as the Java
 * command (rsmap(1), "place"), in about a millisecond instead of half a second. */
#include "rsmap-client.h"
#include "rsmap-jsonread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OK = 0, FAULT = 1, REFUSED = 2, NONE_FITS = 3, TIMEOUT_MS = 30000 };

struct options {
    const char *socket, *filter, *request, *slots, *group, *alternatives;
    struct rsmap_json candidates, group_values; /* built as JSON lists ("[" ... "]") */
    int whole_hosts, json, shell;
};

static void usage(FILE *to) {
    fputs("Usage: rsmap-place [--json | --shell] [--socket PATH] [--filter EXPR] [--request REQUEST] [--slots N]\n"
          "                   [--candidates HOST,...] [--group ATTRIBUTE [--group-values VALUE,...]]\n"
          "                   [--whole-hosts] [--alternatives JSON]\n"
          "Ask the authority (role = authority) where a job can run now; the same options, output and exit\n"
          "codes as `rsmap place` (rsmap(1)): 0 an option fits (or a host passes), 3 none, 2 refused, 1 the\n"
          "authority could not answer within 30 s ($RSMAP_TIMEOUT may shorten it).\n", to);
}

static int refuse(const char *what, const char *detail) {
    fprintf(stderr, "error: %s%s (see 'rsmap-place --help')\n", what, detail);
    return REFUSED;
}

/* Appends the comma-separated items of `list` to a JSON list being built. */
static void add_items(struct rsmap_json *j, const char *list) {
    char *copy = strdup(list), *save = NULL;
    if (!copy) {
        j->failed = 1;
        return;
    }
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        size_t cap = 6 * strlen(item) + 8;
        char *body = malloc(cap);
        if (!body || rsmap_json_string(body, cap, item) < 0) {
            j->failed = 1;
        } else {
            /* rsmap_json_raw writes ,"key":value; a list wants only ,"value": its own small writer */
            size_t need = j->len + strlen(body) + 4;
            char *grown = need > j->cap ? realloc(j->s, need * 2) : j->s;
            if (!grown) {
                j->failed = 1;
            } else {
                if (need > j->cap) j->cap = need * 2;
                j->s = grown;
                j->len += (size_t)sprintf(j->s + j->len, "%s\"%s\"", j->len > 1 ? "," : "", body);
            }
        }
        free(body);
    }
    free(copy);
}

static void list_begin(struct rsmap_json *j) {
    *j = (struct rsmap_json){ .s = strdup("["), .len = 1, .cap = 2 };
    if (!j->s) j->failed = 1;
}

static int parse(int argc, char **argv, struct options *o) {
    static const char *const valued[] = { "--socket", "--filter", "--request", "--slots", "--candidates",
                                          "--group", "--group-values", "--alternatives" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(OK);
        }
        if (!strcmp(a, "--json")) { o->json = 1; continue; }
        if (!strcmp(a, "--shell")) { o->shell = 1; continue; }
        if (!strcmp(a, "--whole-hosts")) { o->whole_hosts = 1; continue; }
        size_t k = 0, n = sizeof valued / sizeof *valued;
        const char *eq = strchr(a, '=');
        size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
        for (; k < n; k++) {
            if (strlen(valued[k]) == name_len && !strncmp(a, valued[k], name_len)) break;
        }
        if (k == n) return refuse("Unknown option: ", a);
        if (eq) v = eq + 1;
        else if (i + 1 < argc) v = argv[++i];
        else return refuse("Missing required parameter for option ", valued[k]);
        switch (k) {
        case 0: o->socket = v; break;
        case 1: o->filter = v; break;
        case 2: o->request = v; break;
        case 3: o->slots = v; break;
        case 4: add_items(&o->candidates, v); break;
        case 5: o->group = v; break;
        case 6: add_items(&o->group_values, v); break;
        default: o->alternatives = v; break;
        }
    }
    if (o->slots) {
        char *end;
        long s = strtol(o->slots, &end, 10);
        if (!*o->slots || *end || s < -2147483648L || s > 2147483647L) {
            fprintf(stderr, "error: Invalid value for option '--slots': '%s' is not an int (see 'rsmap-place --help')\n",
                    o->slots);
            return REFUSED;
        }
    }
    return OK;
}

/* The PLACE argument, as `rsmap place` builds it; NULL after printing why. */
static char *argument(struct options *o, int *status) {
    struct rsmap_json j;
    rsmap_json_begin(&j);
    *status = REFUSED;
    if (o->filter) rsmap_json_str(&j, "filter", o->filter);
    if (o->alternatives) {
        const char *error = NULL;
        struct rsmap_jdoc *d = rsmap_json_parse(o->alternatives, strlen(o->alternatives), &error);
        if (!d) {
            fprintf(stderr, "error: --alternatives: not JSON: %s\n", error);
            free(rsmap_json_end(&j));
            return NULL;
        }
        int list = d->root->type == RSMAP_JARRAY;
        rsmap_json_free(d);
        if (!list) {
            fputs("error: --alternatives: a JSON list of options\n", stderr);
            free(rsmap_json_end(&j));
            return NULL;
        }
        rsmap_json_raw(&j, "alternatives", o->alternatives);
    }
    if (o->request || o->slots) {
        rsmap_json_str(&j, "request", o->request ? o->request : "");
        rsmap_json_int(&j, "slots", o->slots ? strtol(o->slots, NULL, 10) : 1);
    }
    if (o->candidates.len > 1) {
        char *c = rsmap_json_end(&o->candidates);
        if (c) c[strlen(c) - 1] = ']';
        rsmap_json_raw(&j, "candidates", c ? c : "[]");
        o->candidates.s = c;
    }
    if (o->group) {
        rsmap_json_str(&j, "group", o->group);
        char *v = rsmap_json_end(&o->group_values);
        if (v) v[strlen(v) - 1] = ']';
        rsmap_json_raw(&j, "group_values", v ? v : "[]");
        o->group_values.s = v;
    }
    if (o->whole_hosts) rsmap_json_raw(&j, "whole_hosts", "true");
    if (j.len == 1) {
        fputs("error: place needs --filter, --request/--slots or --alternatives\n", stderr);
        free(rsmap_json_end(&j));
        return NULL;
    }
    char *arg = rsmap_json_end(&j);
    if (!arg || o->candidates.failed || o->group_values.failed) {
        fputs("error: out of memory\n", stderr);
        *status = FAULT;
        free(arg);
        return NULL;
    }
    return arg;
}

/* The first argument of PLACE's STATE answer, kept. */
struct answer {
    char *json;
};

static int on_event(void *ctx, unsigned code, int argc, char *const *argv) {
    struct answer *a = ctx;
    if (code == RSMAP_STATE && argc > 0 && !a->json) a->json = strdup(argv[0]);
    return 0;
}

static void reset(void *ctx) {
    struct answer *a = ctx;
    free(a->json);
    a->json = NULL;
}

/* A value a POSIX shell reads back with eval: single-quoted, its own quotes closed and escaped. */
static void quoted(const char *name, const char *v) {
    printf("%s='", name);
    for (; *v; v++) {
        if (*v == '\'') fputs("'\\''", stdout);
        else putchar(*v);
    }
    puts("'");
}

/* The texts of a list, joined by sep. */
static void joined(const struct rsmap_jv *list, const char *sep, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const struct rsmap_jv *e = list && list->type == RSMAP_JARRAY ? list->child : NULL; e; e = e->next) {
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? sep : "", rsmap_json_text(e, ""));
        if (n >= cap) break;
    }
}

/* An object's member names as they came: "host (N slots), ..." for people, "host host" for --shell. */
static void hosts(const struct rsmap_jv *obj, int people, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const struct rsmap_jv *m = obj && obj->type == RSMAP_JOBJECT ? obj->child : NULL; m; m = m->next) {
        if (people) {
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s (%ld slots)", n ? ", " : "", m->key,
                                  (long)m->number);
        } else {
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? " " : "", m->key);
        }
        if (n >= cap) break;
    }
}

static int count(const struct rsmap_jv *v) {
    return v && (v->type == RSMAP_JARRAY || v->type == RSMAP_JOBJECT) ? v->count : 0;
}

static int print(const struct options *o, const char *text) {
    const char *error = NULL;
    struct rsmap_jdoc *d = rsmap_json_parse(text, strlen(text), &error);
    if (!d) {
        fprintf(stderr, "error: rsmapd answered something that is not JSON: %s\n", error);
        return REFUSED;
    }
    const struct rsmap_jv *a = d->root;
    const struct rsmap_jv *decision = rsmap_json_get(a, "decision"), *pass = rsmap_json_get(a, "pass");
    int fits = decision ? strcmp(rsmap_json_text(decision, ""), "none") != 0 : count(pass) > 0;
    static char buf[1 << 20];
    if (o->json) {
        puts(text);
    } else if (o->shell) {
        const struct rsmap_jv *fail = rsmap_json_at(rsmap_json_get(a, "fail"), 0);
        quoted("decision", decision ? rsmap_json_text(decision, "") : count(pass) == 0 ? "none" : "start");
        quoted("alternative", rsmap_json_text(rsmap_json_get(a, "alternative"), ""));
        hosts(rsmap_json_get(a, "hosts"), 0, buf, sizeof buf);
        quoted("hosts", buf);
        joined(pass, " ", buf, sizeof buf);
        quoted("pass", buf);
        if (fail) {
            snprintf(buf, sizeof buf, "%s: %s", rsmap_json_text(rsmap_json_get(fail, "host"), ""),
                     rsmap_json_text(rsmap_json_get(fail, "why"), ""));
        } else {
            buf[0] = '\0';
        }
        quoted("fail", buf);
        quoted("why", rsmap_json_text(rsmap_json_get(a, "why"), ""));
    } else {
        if (rsmap_json_get(a, "filter")) {
            joined(pass, " ", buf, sizeof buf);
            printf("filter %s: %d hosts pass%s%s\n", rsmap_json_text(rsmap_json_get(a, "filter"), ""), count(pass),
                   count(pass) ? ": " : "", buf);
            const struct rsmap_jv *fails = rsmap_json_get(a, "fail");
            for (const struct rsmap_jv *f = fails && fails->type == RSMAP_JARRAY ? fails->child : NULL; f; f = f->next) {
                printf("  %s fails (%s): %s\n", rsmap_json_text(rsmap_json_get(f, "host"), ""),
                       rsmap_json_text(rsmap_json_get(f, "source"), ""), rsmap_json_text(rsmap_json_get(f, "why"), ""));
            }
        }
        if (decision) {
            char alt[64] = "";
            const struct rsmap_jv *n = rsmap_json_get(a, "alternative");
            if (n) snprintf(alt, sizeof alt, "alternative %ld ", n->type == RSMAP_JNUMBER ? (long)n->number : 0L);
            hosts(rsmap_json_get(a, "hosts"), 1, buf, sizeof buf);
            const char *dec = rsmap_json_text(decision, "");
            const struct rsmap_jv *start = rsmap_json_get(a, "start");
            if (!strcmp(dec, "start")) printf("%scan start now on %s\n", alt, buf);
            else if (!strcmp(dec, "planned"))
                printf("%scan start at %lld on %s\n", alt, start && start->type == RSMAP_JNUMBER
                       ? (long long)start->number : 0LL, buf);
            else puts("nothing fits now");
            printf("  %s\n", rsmap_json_text(rsmap_json_get(a, "why"), ""));
        }
    }
    rsmap_json_free(d);
    return fits ? OK : NONE_FITS;
}

/* An ERROR or a failure to ask: the error line, and for scripts the category on stdout. */
static int failed(const struct options *o, const char *message, enum rsmap_category c, int status) {
    fprintf(stderr, "error: %s\n", message);
    if (o->json) {
        static char body[6 * 8192 + 8];
        rsmap_json_string(body, sizeof body, message);
        printf("{\"error\":\"%s\",\"category\":\"%s\"}\n", body, rsmap_category_name(c));
    } else if (o->shell) {
        quoted("error", message);
        quoted("category", rsmap_category_name(c));
    }
    return status;
}

int main(int argc, char **argv) {
    struct options o = { 0 };
    list_begin(&o.candidates);
    list_begin(&o.group_values);
    int status = parse(argc, argv, &o);
    if (status != OK) return status;
    char *arg = argument(&o, &status);
    if (!arg) return status;

    const char *socket = o.socket;
    if (!socket) socket = getenv("RSMAP_SOCKET");
    if (!socket || !*socket) socket = "/run/rsmap/rsmapd.sock";
    struct answer answer = { 0 };
    struct rsmap_request r = { .socket = socket, .code = RSMAP_PLACE, .arg = arg, .timeout_ms = rsmap_timeout_ms(TIMEOUT_MS),
                               .idempotent = 1, .on_event = on_event, .ctx = &answer, .reset = reset };
    struct rsmap_outcome out = { 0 };
    rsmap_exchange(&r, &out);
    free(arg);
    free(o.candidates.s);
    free(o.group_values.s);
    if (out.status == RSMAP_OK && answer.json) {
        status = print(&o, answer.json);
    } else if (out.status == RSMAP_OK) {
        status = failed(&o, "rsmapd answered PLACE without its STATE", RSMAP_CAT_INTERNAL, FAULT);
    } else if (out.status == RSMAP_ERROR) {
        /* By the category, never the words: busy, unavailable and internal may pass (1); refused,
         * malformed, denied and none (an older rsmapd) are the command's (2). */
        char message[sizeof out.why + 16];
        snprintf(message, sizeof message, "rsmapd: %s", out.why);
        int fault = out.category == RSMAP_CAT_BUSY || out.category == RSMAP_CAT_UNAVAILABLE
                    || out.category == RSMAP_CAT_INTERNAL;
        status = out.category == RSMAP_CAT_NONE
            ? (fprintf(stderr, "error: %s\n", message), REFUSED)
            : failed(&o, message, out.category, fault ? FAULT : REFUSED);
    } else {
        status = failed(&o, out.why, RSMAP_CAT_UNAVAILABLE, FAULT);
    }
    free(answer.json);
    return status;
}
