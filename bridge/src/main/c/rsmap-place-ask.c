/* rsmap-place-ask: one PLACE to the authority and its judgement, as `rsmap place` makes them (rsmap(1),
 * "place"): the argument built from the options, one bounded exchange, the answer read as JSON. Used by
 * rsmap-place and, inside slurmctld, by the Lua module of job_submit.lua: no output, no exit, no state. */
#include "rsmap-place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refused(struct rsmap_place_answer *out, int status, const char *what, const char *detail) {
    snprintf(out->error, sizeof out->error, "%s%s", what, detail ? detail : "");
    out->category = RSMAP_CAT_NONE;
    return out->status = status;
}

/* The PLACE argument, as `rsmap place` builds it; NULL with out's error and status set. */
static char *argument(const struct rsmap_place_ask *a, struct rsmap_place_answer *out) {
    struct rsmap_json j;
    rsmap_json_begin(&j);
    if (a->filter) rsmap_json_str(&j, "filter", a->filter);
    if (a->alternatives) {
        const char *error = NULL;
        struct rsmap_jdoc *d = rsmap_json_parse(a->alternatives, strlen(a->alternatives), &error);
        int list = d && d->root->type == RSMAP_JARRAY;
        rsmap_json_free(d);
        if (!list) {
            free(rsmap_json_end(&j));
            if (!d) refused(out, RSMAP_PLACE_REFUSED, "--alternatives: not JSON: ", error);
            else refused(out, RSMAP_PLACE_REFUSED, "--alternatives: a JSON list of options", NULL);
            return NULL;
        }
        rsmap_json_raw(&j, "alternatives", a->alternatives);
    }
    if (a->request || a->has_slots) {
        rsmap_json_str(&j, "request", a->request ? a->request : "");
        rsmap_json_int(&j, "slots", a->has_slots ? a->slots : 1);
    }
    if (a->candidates) rsmap_json_raw(&j, "candidates", a->candidates);
    if (a->group) {
        rsmap_json_str(&j, "group", a->group);
        rsmap_json_raw(&j, "group_values", a->group_values ? a->group_values : "[]");
    }
    if (a->whole_hosts) rsmap_json_raw(&j, "whole_hosts", "true");
    if (j.len == 1 && !j.failed) {
        free(rsmap_json_end(&j));
        refused(out, RSMAP_PLACE_REFUSED, "place needs --filter, --request/--slots or --alternatives", NULL);
        return NULL;
    }
    char *arg = rsmap_json_end(&j);
    if (!arg) refused(out, RSMAP_PLACE_FAULT, "out of memory", NULL);
    /* Over the bound the frame is never sent, so it is not tried at all (the same count as rsmap_send_by's).
     * The job's options are too long, not the authority out of reach: refused, with a category, so that
     * job_submit.lua and the JSV refuse the job rather than pass it unchecked. */
    const char *const frame_args[] = { arg };
    if (arg && rsmap_frame_body(1, frame_args) > RSMAP_MAX_FRAME) {
        char detail[128];
        snprintf(detail, sizeof detail, " (%zu bytes as JSON) is over the protocol's %d MiB frame bound: not sent",
                 strlen(arg), RSMAP_MAX_FRAME >> 20);
        free(arg);
        refused(out, RSMAP_PLACE_REFUSED, "the argument of PLACE", detail);
        out->category = RSMAP_CAT_REFUSED;
        return NULL;
    }
    return arg;
}

/* The first argument of PLACE's STATE answer, kept; `failed` once it could not be. */
struct kept {
    char *json;
    int failed;
};

static int on_event(void *ctx, unsigned code, int argc, char *const *argv) {
    struct kept *k = ctx;
    if (code != RSMAP_STATE || argc < 1 || k->json) return 0;
    k->json = strdup(argv[0]);
    if (!k->json) k->failed = 1; /* judged after the OK: not a lost connection to be tried again */
    return 0;
}

static void reset(void *ctx) {
    struct kept *k = ctx;
    free(k->json);
    *k = (struct kept){ 0 };
}

int rsmap_place_ask(const struct rsmap_place_ask *a, struct rsmap_place_answer *out) {
    *out = (struct rsmap_place_answer){ .status = RSMAP_PLACE_FAULT, .category = RSMAP_CAT_NONE };
    char *arg = argument(a, out);
    if (!arg) return out->status;
    struct kept kept = { 0 };
    struct rsmap_request r = { .socket = a->socket, .code = RSMAP_PLACE, .arg = arg, .timeout_ms = a->timeout_ms,
                               .idempotent = 1, .on_event = on_event, .ctx = &kept, .reset = reset };
    struct rsmap_outcome o = { 0 };
    rsmap_exchange(&r, &o);
    free(arg);
    if (o.status == RSMAP_OK && kept.json) {
        const char *error = NULL;
        out->doc = rsmap_json_parse(kept.json, strlen(kept.json), &error);
        if (!out->doc) {
            free(kept.json);
            return refused(out, RSMAP_PLACE_REFUSED, "rsmapd answered something that is not JSON: ", error);
        }
        out->answer = kept.json;
        const struct rsmap_jv *root = out->doc->root;
        const struct rsmap_jv *decision = rsmap_json_get(root, "decision");
        int fits = decision ? strcmp(rsmap_json_text(decision, ""), "none") != 0
                            : rsmap_json_count(rsmap_json_get(root, "pass")) > 0;
        return out->status = fits ? RSMAP_PLACE_FITS : RSMAP_PLACE_NONE_FITS;
    }
    free(kept.json);
    if (o.status == RSMAP_OK && kept.failed) {
        refused(out, RSMAP_PLACE_FAULT, "out of memory", NULL);
        out->category = RSMAP_CAT_INTERNAL;
    } else if (o.status == RSMAP_OK) {
        refused(out, RSMAP_PLACE_FAULT, "rsmapd answered PLACE without its STATE", NULL);
        out->category = RSMAP_CAT_INTERNAL;
    } else if (o.status == RSMAP_ERROR) {
        /* By the category, never the words: busy, unavailable and internal may pass (1); refused,
         * malformed, denied and none (an older rsmapd) are the command's (2). */
        int fault = o.category == RSMAP_CAT_BUSY || o.category == RSMAP_CAT_UNAVAILABLE
                    || o.category == RSMAP_CAT_INTERNAL;
        refused(out, fault ? RSMAP_PLACE_FAULT : RSMAP_PLACE_REFUSED, "rsmapd: ", o.why);
        out->category = o.category;
    } else {
        /* No answer: the authority's side, never the job's - an answer over the frame bound too (the
         * cluster's size, not the filter's fault): job_submit.lua accepts the job and rsmapd checks at start. */
        refused(out, RSMAP_PLACE_FAULT, o.why, NULL);
        out->category = RSMAP_CAT_UNAVAILABLE;
    }
    return out->status;
}

void rsmap_place_free(struct rsmap_place_answer *out) {
    rsmap_json_free(out->doc);
    free(out->answer);
    out->doc = NULL;
    out->answer = NULL;
}

char *rsmap_place_json(const struct rsmap_place_answer *out) {
    if (out->answer) return strdup(out->answer);
    if (out->category == RSMAP_CAT_NONE) return NULL;
    size_t cap = 6 * strlen(out->error) + 8;
    char *body = malloc(cap);
    if (!body) return NULL;
    rsmap_json_string(body, cap, out->error);
    const char *name = rsmap_category_name(out->category);
    size_t n = strlen(body) + strlen(name) + 32;
    char *line = malloc(n);
    if (line) snprintf(line, n, "{\"error\":\"%s\",\"category\":\"%s\"}", body, name);
    free(body);
    return line;
}
