/* rsmap_place.so: the authority's PLACE as a Lua 5.1 C module, for job_submit.lua inside slurmctld
 * (docs/integration-slurm.md, "At submission"): the exchange of rsmap-place (rsmap-place-ask.c) without a
 * process per submission. slurmctld loads it with package.loadlib; its lua_* come from slurmctld's liblua.
 *
 *   local place = package.loadlib(path, "luaopen_rsmap_place")().place
 *   line, err = place(filter, request_or_nil, socket_or_nil, timeout_seconds_or_nil)
 *
 * line: the JSON line `rsmap-place --json` prints (the answer; {"error","category"} for an ERROR with a
 * category or no answer), nil where it prints none. err: the error line it writes ("error: ..."), nil on
 * an answer. The two values job_submit.lua read from rsmap-place's output. Every wait ends by the timeout
 * (default and at most 30 s, rsmap-place's); no signal handler, no output, nothing kept between calls. */
#include "rsmap-place.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER "rsmap_place.answer"

enum { TIMEOUT_MS = 30000 };

/* What a call holds in C memory, in a userdata whose __gc frees it: a memory error raised while the
 * results are pushed unwinds past this function, and nothing leaks in a slurmctld that runs for months. */
struct held {
    struct rsmap_place_answer answer;
    char *line;
};

static void release(struct held *h) {
    rsmap_place_free(&h->answer);
    free(h->line);
    h->line = NULL;
}

static int collect(lua_State *L) {
    release(luaL_checkudata(L, 1, ANSWER));
    return 0;
}

/* Argument i as a C string: NULL for nil (when allowed) or "" ; *bad says why it is neither. */
static const char *text(lua_State *L, int i, int optional, const char **bad) {
    size_t len;
    if (optional && lua_isnoneornil(L, i)) return NULL;
    if (lua_type(L, i) != LUA_TSTRING) {
        *bad = "a string";
        return NULL;
    }
    const char *s = lua_tolstring(L, i, &len);
    if (strlen(s) != len) *bad = "a string without NUL bytes";
    return s;
}

static int refuse(lua_State *L, const char *name, const char *bad) {
    lua_pushnil(L);
    lua_pushfstring(L, "error: rsmap_place.place: %s must be %s", name, bad);
    return 2;
}

static int place(lua_State *L) {
    const char *bad = NULL;
    const char *filter = text(L, 1, 0, &bad);
    if (bad) return refuse(L, "the filter", bad);
    const char *request = text(L, 2, 1, &bad);
    if (bad) return refuse(L, "the request", bad);
    const char *socket = text(L, 3, 1, &bad);
    if (bad) return refuse(L, "the socket", bad);
    int timeout_ms = TIMEOUT_MS;
    if (!lua_isnoneornil(L, 4)) {
        double ms = lua_type(L, 4) == LUA_TNUMBER ? lua_tonumber(L, 4) * 1000 : 0;
        if (!(ms > 0)) return refuse(L, "the timeout", "a number of seconds above 0"); /* NaN too */
        if (ms < TIMEOUT_MS) timeout_ms = (int)ms + ((int)ms < ms); /* rounded up: a bound, never 0 */
    }
    struct held *h = lua_newuserdata(L, sizeof *h);
    *h = (struct held){ .line = NULL };
    luaL_getmetatable(L, ANSWER);
    lua_setmetatable(L, -2);

    struct rsmap_place_ask a = { .socket = socket && *socket ? socket : NULL, .filter = filter,
                                 .request = request, .timeout_ms = timeout_ms };
    int status = rsmap_place_ask(&a, &h->answer);
    h->line = rsmap_place_json(&h->answer);
    int answered = status == RSMAP_PLACE_FITS || status == RSMAP_PLACE_NONE_FITS;
    if (h->line) lua_pushstring(L, h->line);
    else lua_pushnil(L);
    if (answered && h->line) lua_pushnil(L);
    else lua_pushfstring(L, "error: %s", answered ? "out of memory" : h->answer.error);
    release(h);
    return 2;
}

int luaopen_rsmap_place(lua_State *L) {
    luaL_newmetatable(L, ANSWER);
    lua_pushcfunction(L, collect);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, place);
    lua_setfield(L, -2, "place");
    return 1;
}
