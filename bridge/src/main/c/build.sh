#!/bin/sh
# The C of the workload-manager side, built with gcc in this one place. The agent-protocol client, the
# request check and the authority's PLACE are compiled once into native/librsmap-client.a, which
# rsmap-hook (prolog, starter_method and epilog; rsmap-starter is a link to it), rsmap-shell (a running
# job's realloc, release, cancel and status), rsmap-place, the Lua module of job_submit.lua, the Slurm
# SPANK plugin and the test drivers link.
#   build.sh OUT               everything, into OUT (Maven's target/)
#   build.sh OUT hook SYSCONF  the library, rsmap-hook and rsmap-shell only, reading the installed
#                              configuration from SYSCONF instead of /etc/rsmap/rsmapd.conf (a test's
#                              build: HookBuild)
# spank_rsmap.so needs slurm/spank.h (Debian's libslurm-dev), rsmap_place.so Lua 5.1's headers (Debian's
# liblua5.1-0-dev): without them the one concerned is left out with a warning; under CI=true that is an error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
test=$here/../../test/c
out=$1
only=${2:-all}
lib=$out/native
mkdir -p "$lib"
cflags="-O2 -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE"
if [ "$only" = hook ]; then
    # A compile-time constant, never the environment (rsmap-client.h): the test's path goes in as a macro.
    case $3 in
        *[[:space:]\"\\]*) echo "ERROR: build.sh: SYSCONF must be a path without blanks or quotes: $3" >&2; exit 2 ;;
    esac
    cflags="$cflags -DRSMAP_SYSCONF=\"$3\""
fi

# -fPIC once: the same objects go into the static hook and the shared SPANK plugin.
for c in rsmap-client rsmap-trust rsmap-exchange rsmap-json rsmap-jsonread rsmap-request rsmap-place-ask slurm-slots; do
    gcc $cflags -fPIC -c -o "$lib/$c.o" "$here/$c.c"
done
rm -f "$lib/librsmap-client.a"
ar rcs "$lib/librsmap-client.a" "$lib/rsmap-client.o" "$lib/rsmap-trust.o" "$lib/rsmap-exchange.o" \
    "$lib/rsmap-json.o" "$lib/rsmap-jsonread.o" "$lib/rsmap-request.o" "$lib/rsmap-place-ask.o"

# Static: no dynamic loader runs in the job path (a job start pays for every exec).
gcc $cflags -I"$here" -static -o "$out/rsmap-hook" "$here/rsmap-hook.c" "$lib/librsmap-client.a"
# execd runs a starter_method without arguments: the hook is the starter by this name.
ln -sf rsmap-hook "$out/rsmap-starter"
# Static too: a job may call it in a loop, and it is installed set-group-ID like the hook.
gcc $cflags -I"$here" -static -o "$out/rsmap-shell" "$here/rsmap-shell.c" "$here/rsmap-shell-args.c" \
    "$lib/librsmap-client.a"
[ "$only" = hook ] && exit 0

# Static as well: job_submit.lua and the JSV run it for every submission with a filter or alternatives,
# where `rsmap place` would start a JVM (docs/integration-slurm.md, "At submission").
gcc $cflags -I"$here" -static -o "$out/rsmap-place" "$here/rsmap-place.c" "$lib/librsmap-client.a"

# The test drivers of the table-free parts (request form, slots, the JSON reader): RequestCheckIT,
# SlurmSlotsIT, JsonReadIT.
gcc $cflags -I"$here" -o "$out/rsmap-request-check" "$test/request-check.c" "$lib/librsmap-client.a"
gcc $cflags -I"$here" -o "$out/json-check" "$test/json-check.c" "$lib/librsmap-client.a"
gcc $cflags -I"$here" -o "$out/slurm-slots-check" "$test/slots-check.c" "$lib/slurm-slots.o"

# The same PLACE in-process for job_submit.lua: a Lua 5.1 C module (Debian's Slurm 22.05 links liblua5.1), no
# process per submission while slurmctld holds its job lock. Its lua_* resolve in slurmctld's liblua (the
# job_submit/lua plugin opens it RTLD_GLOBAL): no -llua. --exclude-libs keeps the client's symbols its own.
lua_cflags=$(pkg-config --cflags lua5.1 2>/dev/null || echo -I/usr/include/lua5.1)
if printf '#include <lua.h>\n#include <lauxlib.h>\n' | gcc $lua_cflags -E - >/dev/null 2>&1; then
    gcc $cflags $lua_cflags -I"$here" -fPIC -shared -Wl,--exclude-libs,ALL -o "$out/rsmap_place.so" \
        "$here/rsmap-place-lua.c" "$lib/librsmap-client.a"
    # The module's test driver: a Lua of its own (the host's liblua5.1) that runs a script (PlaceModuleIT).
    gcc $cflags $lua_cflags -o "$out/lua-run" "$test/lua-run.c" $(pkg-config --libs lua5.1 2>/dev/null || echo -llua5.1)
elif [ "${CI:-}" = true ]; then
    echo "ERROR: lua.h (Lua 5.1) not found: job_submit.lua's module rsmap_place.so cannot be built (apt-get install liblua5.1-0-dev; .ci/run does)" >&2
    exit 1
else
    echo "WARNING: lua.h (Lua 5.1) not found: rsmap_place.so is not built, job_submit.lua runs rsmap-place instead (apt-get install liblua5.1-0-dev)" >&2
fi

spank_h=$(printf '#include <slurm/spank.h>\n' | gcc -E -M - 2>/dev/null | tr ' \\' '\n\n' | grep 'slurm/spank.h$' || true)
if [ -z "$spank_h" ]; then
    if [ "${CI:-}" = true ]; then
        echo "ERROR: slurm/spank.h not found: the Slurm SPANK plugin cannot be built (apt-get install libslurm-dev; .ci/run does)" >&2
        exit 1
    fi
    echo "WARNING: slurm/spank.h not found: spank_rsmap.so is not built (apt-get install libslurm-dev)" >&2
    exit 0
fi
# A SPANK plugin resolves spank_* and slurm_* from the Slurm process that loads it: no -lslurm.
gcc $cflags -fPIC -shared -o "$out/spank_rsmap.so" "$here/spank_rsmap.c" "$here/spank_rsmap_node.c" "$lib/slurm-slots.o" \
    "$lib/librsmap-client.a"
