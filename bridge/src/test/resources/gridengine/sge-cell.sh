#!/bin/sh
# A one-host Son of Grid Engine 8.1.9 cell (Debian's gridengine-master, -exec, -client) of its own:
# cell CELL under /var/lib/gridengine, spools under DIR, qmaster and execd on PORT and PORT+1, admin user
# root. Made with the tools Debian's own init_cluster uses (spoolinit, spooldefaults), no debconf.
#   sge-cell.sh create DIR CELL PORT    the cell's files and spool (no daemon); job ids from $FIRST_JOB_ID
#   sge-cell.sh qmaster DIR CELL PORT   starts qmaster; waits until it answers
#   sge-cell.sh execd  DIR CELL PORT    starts execd; waits until the host reports load
#   sge-cell.sh stop   DIR CELL PORT    both daemons (by their pid files), then removes the cell
# The daemons inherit the caller's environment: execd hands it on to prolog, starter_method and epilog.
set -eu
cmd=$1 dir=$2 cell=$3 port=$4
root=/var/lib/gridengine
lib=/usr/lib/gridengine
host=$(hostname)
export SGE_ROOT=$root SGE_CELL=$cell SGE_QMASTER_PORT=$port SGE_EXECD_PORT=$((port + 1))
common=$root/$cell/common

case $cmd in
create)
    [ ! -e "$root/$cell" ] || { echo "sge-cell: $root/$cell exists" >&2; exit 2; }
    mkdir -p "$common" "$dir/qmaster" "$dir/spooldb" "$dir/execd"
    sed -e "s|^admin_user .*|admin_user              root|" \
        -e "s|^spooling_params .*|spooling_params         $dir/spooldb|" \
        -e "s|^qmaster_spool_dir .*|qmaster_spool_dir       $dir/qmaster|" \
        /usr/share/gridengine/default-bootstrap >"$common/bootstrap"
    echo "$host" >"$common/act_qmaster"
    # The host's name resolves to 127.0.0.1 only, whose name is localhost: without the alias qmaster
    # refuses clients that call themselves by the host's name.
    echo "$host localhost" >"$common/host_aliases"
    sed -e "s|^execd_spool_dir .*|execd_spool_dir        $dir/execd|" \
        -e "s|^load_report_time .*|load_report_time       00:00:05|" \
        -e "s|^mailer .*|mailer                 /bin/true|" \
        /usr/share/gridengine/default-configuration >"$dir/global"
    "$lib/spoolinit" berkeleydb libspoolb "$dir/spooldb" init >/dev/null
    "$lib/spooldefaults" configuration "$dir/global" >/dev/null
    "$lib/spooldefaults" complexes /usr/share/gridengine/util/resources/centry >/dev/null
    "$lib/spooldefaults" usersets /usr/share/gridengine/util/resources/usersets >/dev/null
    "$lib/spooldefaults" managers root >/dev/null
    "$lib/spooldefaults" adminhosts "$host" >/dev/null 2>&1 || true
    # Job ids from FIRST_JOB_ID: the device cgroups rsmap/<job> of this cell name no one else's.
    [ -z "${FIRST_JOB_ID:-}" ] || echo $((FIRST_JOB_ID - 1)) >"$dir/qmaster/jobseqnum"
    ;;
qmaster)
    SGE_MASTER_PIDFILE=$dir/qmaster.pid "$lib/sge_qmaster"
    i=0
    until qconf -sh >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 100 ] || { echo "sge-cell: qmaster did not answer in 20 s" >&2; tail "$dir/qmaster/messages" >&2; exit 1; }
        sleep 0.2
    done
    qconf -ah "$host" >/dev/null 2>&1 || true
    qconf -as "$host" >/dev/null 2>&1 || true
    ;;
execd)
    SGE_EXECD_PIDFILE=$dir/execd.pid "$lib/sge_execd"
    i=0
    until qhost -h "$host" 2>/dev/null | awk -v h="$host" '$1 == h && $4 != "-" { ok = 1 } END { exit !ok }'; do
        i=$((i + 1)); [ $i -lt 300 ] || { echo "sge-cell: execd did not report in 60 s" >&2; exit 1; }
        sleep 0.2
    done
    ;;
stop)
    . "$(dirname "$0")/stop-daemons.sh"
    stop_daemons "$dir/execd.pid" "$dir/qmaster/qmaster.pid"
    rm -rf "${root:?}/${cell:?}"
    ;;
*) echo "sge-cell: unknown command $cmd" >&2; exit 2 ;;
esac
