#!/bin/sh
# Per-job cost of a resource-map request on a running cell: N pairs of "qsub -sync y" of a binary job
# ("true"), one with RSMAP_REQUEST (server JSV check, prolog JOB_START, starter JOB_ENTER, epilog JOB_END
# with a grant), one without (the JSV accepts it, the starter and epilog still talk to rsmapd), taken in
# turns; prints each one's median wall time and their ratio. Runs as USER from DIR; SGE_ROOT, SGE_CELL,
# the ports and PATH come from the caller.
# With MODE=submit (third argument) the jobs are submitted held (-h, no -sync) and deleted: the time is
# qsub's alone, the part the JSV is in.
#   qsub-overhead.sh USER DIR [N [MODE]]     (N = 20, MODE = sync)
set -eu
user=$1 dir=$2 n=${3:-20} mode=${4:-sync}
case $mode in sync) how="-sync y" ;; submit) how="-h" ;; *) echo "qsub-overhead: MODE is sync or submit" >&2; exit 2 ;; esac
now() { date +%s%N; }
one() { # $1: the request, or empty
    t0=$(now)
    runuser -u "$user" -- env -i PATH="$PATH" SGE_ROOT="$SGE_ROOT" SGE_CELL="$SGE_CELL" \
        SGE_QMASTER_PORT="$SGE_QMASTER_PORT" SGE_EXECD_PORT="$SGE_EXECD_PORT" RSMAP_REQUEST="$1" \
        sh -c 'cd "$0" && if [ -n "$RSMAP_REQUEST" ]; then qsub $1 -terse -cwd -b y -o /dev/null -j y -l gpu=1 -v RSMAP_REQUEST true;
               else qsub $1 -terse -cwd -b y -o /dev/null -j y true; fi' "$dir" "$how" >"$ids"
    echo $(( ($(now) - t0) / 1000000 ))
    [ "$mode" = sync ] || qdel "$(head -n 1 "$ids")" >/dev/null
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
with=$(mktemp) without=$(mktemp) ids=$(mktemp)
trap 'rm -f "$with" "$without" "$ids"' EXIT
i=0
while [ $i -lt "$n" ]; do
    one "gpu=1" >>"$with"
    one "" >>"$without"
    i=$((i + 1))
done
a=$(median <"$with") b=$(median <"$without")
echo "with RSMAP_REQUEST: median ${a} ms; without: median ${b} ms; ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') (n=$n each, $mode)"
