#!/bin/sh
# rsmapd's configuration of a running one-host cell, with qconf from files only (no editor), as
# docs/integration-ocs.md gives it; the same commands for Son of Grid Engine 8.1 and Open Cluster
# Scheduler 9.1. SGE_ROOT, SGE_CELL, the ports and PATH (qconf) come from the caller.
#   configure-cell.sh cell DIR HOST HOOKS SLOTS   before execd starts: execd takes a changed global
#                                                  configuration only seconds later, and a job started
#                                                  meanwhile runs without prolog and epilog
#   configure-cell.sh host DIR HOST                once execd has registered its host: the map's amount
# HOOKS holds rsmap-hook, rsmap-starter (a link to it) and jsv (the server JSV, a wrapper that sets
# RSMAP_PLACE and RSMAP_COMPLEXES: qmaster runs a JSV in an environment of its own). Writes its files to DIR.
set -eu
phase=$1 dir=$2 host=$3
mkdir -p "$dir/qconf"
cd "$dir/qconf"
if [ "$phase" = host ]; then
    qconf -aattr exechost complex_values gpu=8 "$host" >/dev/null
    exit 0
fi
hooks=$4 slots=$5

# qconf's output, one attribute a line: a line ending in a backslash goes on in the next; a list's blank
# after a comma (OCS 9.1's binding_params) goes, a blank between values (SGE 8.1's reporting_params) stays.
unfold() {
    awk '
        /^[a-z_]+[ \t]/ { if (line != "") print line; line = $0; next }
        { sub(/^[ \t]+/, ""); line = line $0 }
        END { if (line != "") print line }' | sed -e 's/\\//g' -e 's/, */,/g'
}

# The map as the scheduler books it: a plain consumable (rsmapd assigns the instances).
qconf -sc | grep -v '^#' | awk '$1 != "gpu"' >complexes
echo "gpu gpu INT <= YES YES 0 0" >>complexes
qconf -Mc complexes >/dev/null

# Global configuration: the hooks, the server JSV. min_uid and min_gid 0: OCS 9.1 holds the user of a
# "root@" prolog or epilog against them too (job "failed before prolog: gid of user root (0) less than
# minimum allowed"), SGE 8.1 only the job's owner. The file's name is the configuration's name.
qconf -sconf global | grep -v '^#' | unfold | sed \
    -e "s|^prolog .*|prolog root@$hooks/rsmap-hook prolog|" \
    -e "s|^epilog .*|epilog root@$hooks/rsmap-hook epilog|" \
    -e "s|^jsv_url .*|jsv_url script:$hooks/jsv|" \
    -e "s|^min_uid .*|min_uid 0|" -e "s|^min_gid .*|min_gid 0|" >global
qconf -Mconf global >/dev/null

cat >pe <<PE
pe_name            rsmap
slots              $slots
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    \$round_robin
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
PE
# Son of Grid Engine 8.1 requires qsort_args, Open Cluster Scheduler 9.1 ign_sreq_on_mhost.
cp pe pe.ocs
echo "qsort_args         NONE" >>pe
printf "ign_sreq_on_mhost FALSE\nmaster_forks_slaves FALSE\ndaemon_forks_slaves FALSE\n" >>pe.ocs
qconf -sp rsmap >/dev/null 2>&1 || qconf -Ap pe >/dev/null 2>&1 || qconf -Ap pe.ocs >/dev/null

# The scheduler every second (a test waits for it; the default is 15 s).
qconf -ssconf | sed -e 's|^schedule_interval .*|schedule_interval 0:0:1|' >sched
qconf -Msconf sched >/dev/null

# The queue: the starter_method, the pe, no load threshold (a busy CI host would put the queue in alarm).
set_queue() {
    sed -e "s|^hostlist .*|hostlist $host|" -e 's|^load_thresholds .*|load_thresholds NONE|' \
        -e 's|^pe_list .*|pe_list rsmap|' -e "s|^slots .*|slots $slots|" \
        -e "s|^starter_method .*|starter_method $hooks/rsmap-starter|" -e 's|^rerun .*|rerun FALSE|'
}
if qconf -sq all.q >/dev/null 2>&1; then
    qconf -sq all.q | unfold | set_queue >all.q
    qconf -Mq all.q >/dev/null
else
    set_queue >all.q <<'Q'
qname                 all.q
hostlist              NONE
seq_no                0
load_thresholds       np_load_avg=1.75
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               make
rerun                 FALSE
slots                 1
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
Q
    qconf -Aq all.q >/dev/null
fi
