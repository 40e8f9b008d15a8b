/* lua-run: a Lua 5.1 of the tests' own (the host's liblua5.1, its symbols global as in slurmctld) that runs
 * one script, for rsmap_place.so's test (PlaceModuleIT): the script loads the module with package.loadlib
 * as job_submit.lua does. Beside Lua's standard libraries two functions: open_fds(), the number of this
 * process's open file descriptors (/proc/self/fd), so that a call that leaks one shows; now(), the monotonic
 * clock in seconds, for the bench's timing of a call (PlaceCall).
 *
 * Usage: lua-run SCRIPT [ARG...]   (the ARGs in the global table arg, from 1; exit 1 on a Lua error) */
#include <dirent.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <time.h>

static int open_fds(lua_State *L) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d) {
        while (readdir(d)) n++;
        closedir(d);
    }
    lua_pushinteger(L, n - 3); /* ".", ".." and the directory's own descriptor */
    return 1;
}

static int now(lua_State *L) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    lua_pushnumber(L, (lua_Number)t.tv_sec + t.tv_nsec / 1e9);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: lua-run SCRIPT [ARG...]\n", stderr);
        return 2;
    }
    lua_State *L = luaL_newstate();
    if (!L) return 1;
    luaL_openlibs(L);
    lua_register(L, "open_fds", open_fds);
    lua_register(L, "now", now);
    lua_createtable(L, argc, 0);
    for (int i = 1; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");
    if (luaL_dofile(L, argv[1]) != 0) {
        fprintf(stderr, "lua-run: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    lua_close(L);
    return 0;
}
