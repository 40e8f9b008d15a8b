#!/bin/sh
# The C of the workload-manager side, built with gcc in this one place. The agent-protocol client and the
# request check are compiled once into native/librsmap-client.a, which rsmap-hook (prolog, starter_method
# and epilog; rsmap-starter is a link to it), rsmap-shell (a running job's realloc, release, cancel and
# status), the Slurm SPANK plugin and the test drivers link.
#   build.sh OUT               everything, into OUT (Maven's target/)
#   build.sh OUT hook SYSCONF  the library, rsmap-hook and rsmap-shell only, reading the installed
#                              configuration from SYSCONF instead of /etc/rsmap/rsmapd.conf (a test's
#                              build: HookBuild)
# spank_rsmap.so needs slurm/spank.h (Debian's libslurm-dev): without it the plugin is left out with a
# warning; under CI=true that is an error.
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
for c in rsmap-client rsmap-trust rsmap-exchange rsmap-json rsmap-jsonread rsmap-request slurm-slots; do
    gcc $cflags -fPIC -c -o "$lib/$c.o" "$here/$c.c"
done
rm -f "$lib/librsmap-client.a"
ar rcs "$lib/librsmap-client.a" "$lib/rsmap-client.o" "$lib/rsmap-trust.o" "$lib/rsmap-exchange.o" \
    "$lib/rsmap-json.o" "$lib/rsmap-jsonread.o" "$lib/rsmap-request.o"

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

# The test drivers of the table-free parts (request form, slots): RequestCheckIT, SlurmSlotsIT.
gcc $cflags -I"$here" -o "$out/rsmap-request-check" "$test/request-check.c" "$lib/librsmap-client.a"
gcc $cflags -I"$here" -o "$out/slurm-slots-check" "$test/slots-check.c" "$lib/slurm-slots.o"

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
