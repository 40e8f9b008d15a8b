#!/bin/sh
# Builds the C side of the plugin module with gcc: the Slurm SPANK plugin (needs spank.h from Debian's
# libslurm-dev) and the test drivers of its table-free parts (request form, slots).
# Without spank.h the SPANK plugin is left out with a warning; under CI=true that is an error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
cflags="-O2 -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE"
gcc $cflags -o "$out/rsmap-request-check" "$here/../../test/c/request-check.c" "$here/rsmap-request.c"
gcc $cflags -o "$out/slurm-slots-check" "$here/../../test/c/slots-check.c" "$here/slurm-slots.c"
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
gcc $cflags -fPIC -shared -o "$out/spank_rsmap.so" \
    "$here/spank_rsmap.c" "$here/rsmap-client.c" "$here/rsmap-request.c" "$here/slurm-slots.c"
