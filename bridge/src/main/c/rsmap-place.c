/* rsmap-place: `rsmap place` without a JVM, for what runs at every submission (the OCS JSV; Slurm's
 * job_submit.lua where its Lua module is not used): PLACE to the authority's socket with the same options,
 * output and exit codes as the Java command (rsmap(1), "place"), in about a millisecond instead of half a
 * second. The exchange and its judgement are rsmap-place-ask.c, shared with that module; this file is the
 * command line and the printing. */
#include "rsmap-place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OK = RSMAP_PLACE_FITS, FAULT = RSMAP_PLACE_FAULT, REFUSED = RSMAP_PLACE_REFUSED, TIMEOUT_MS = 30000 };

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

/* The answer in the form asked for: the JSON itself, shell assignments, or lines for people. */
static void print(const struct options *o, const struct rsmap_place_answer *p) {
    const struct rsmap_jv *a = p->doc->root;
    const struct rsmap_jv *decision = rsmap_json_get(a, "decision"), *pass = rsmap_json_get(a, "pass");
    static char buf[1 << 20];
    if (o->json) {
        puts(p->answer);
    } else if (o->shell) {
        const struct rsmap_jv *fail = rsmap_json_at(rsmap_json_get(a, "fail"), 0);
        quoted("decision", decision ? rsmap_json_text(decision, "") : rsmap_json_count(pass) == 0 ? "none" : "start");
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
            printf("filter %s: %d hosts pass%s%s\n", rsmap_json_text(rsmap_json_get(a, "filter"), ""), rsmap_json_count(pass),
                   rsmap_json_count(pass) ? ": " : "", buf);
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
}

/* An ERROR or a failure to ask: the error line, and for scripts (where rsmap place gives one) the category
 * on stdout. */
static void failed(const struct options *o, const struct rsmap_place_answer *p) {
    fprintf(stderr, "error: %s\n", p->error);
    if (p->category == RSMAP_CAT_NONE) return;
    if (o->json) {
        char *line = rsmap_place_json(p);
        if (line) puts(line);
        free(line);
    } else if (o->shell) {
        quoted("error", p->error);
        quoted("category", rsmap_category_name(p->category));
    }
}

/* A list option's JSON ("[...]"), or NULL when none was given. */
static const char *list_of(struct rsmap_json *j) {
    if (j->len <= 1) return NULL;
    char *s = rsmap_json_end(j); /* closed with "}", made "]"; NULL (failed) when memory ran out */
    if (s) s[strlen(s) - 1] = ']';
    return j->s = s;
}

int main(int argc, char **argv) {
    struct options o = { 0 };
    list_begin(&o.candidates);
    list_begin(&o.group_values);
    int status = parse(argc, argv, &o);
    if (status != OK) return status;
    struct rsmap_place_answer p;
    const char *candidates = list_of(&o.candidates), *group_values = list_of(&o.group_values);
    if (o.candidates.failed || o.group_values.failed) {
        fputs("error: out of memory\n", stderr);
        return FAULT;
    }
    struct rsmap_place_ask a = { .socket = o.socket, .filter = o.filter, .request = o.request,
                                 .alternatives = o.alternatives, .group = o.group,
                                 .candidates = candidates, .group_values = group_values,
                                 .slots = o.slots ? strtol(o.slots, NULL, 10) : 1, .has_slots = o.slots != NULL,
                                 .whole_hosts = o.whole_hosts, .timeout_ms = rsmap_timeout_ms(TIMEOUT_MS) };
    status = rsmap_place_ask(&a, &p);
    if (p.doc) print(&o, &p);
    else failed(&o, &p);
    rsmap_place_free(&p);
    free(o.candidates.s);
    free(o.group_values.s);
    return status;
}
