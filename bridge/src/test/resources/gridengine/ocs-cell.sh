#!/bin/sh
# A one-host Open Cluster Scheduler 9.1 cell of its own, in the SGE_ROOT that .ci/build-ocs.sh installed:
# cell CELL, spools under DIR, qmaster and execd on PORT and PORT+1, admin user root. Made with the tools
# inst_qmaster itself uses (spoolinit, spooldefaults), because inst_sge refuses a host whose name resolves
# to 127.0.0.1 (CheckForLocalHostResolving), as CI hosts' names do.
#   ocs-cell.sh create  DIR CELL PORT   the cell's files and spool (no daemon); job ids from $FIRST_JOB_ID
#   ocs-cell.sh qmaster DIR CELL PORT   starts qmaster; waits until it answers
#   ocs-cell.sh execd   DIR CELL PORT   starts execd; waits until the host reports load
#   ocs-cell.sh stop    DIR CELL PORT   both daemons (by their pid files), then removes the cell
# SGE_ROOT comes from the caller. The daemons inherit the caller's environment: execd hands it on to
# prolog, starter_method and epilog.
set -eu
cmd=$1 dir=$2 cell=$3 port=$4
root=${SGE_ROOT:?SGE_ROOT: the OCS installation}
bin=$root/bin/lx-amd64
utilbin=$root/utilbin/lx-amd64
host=$(hostname)
export SGE_CELL=$cell SGE_QMASTER_PORT=$port SGE_EXECD_PORT=$((port + 1))
export PATH=$bin:$PATH
common=$root/$cell/common

case $cmd in
create)
    [ ! -e "$root/$cell" ] || { echo "ocs-cell: $root/$cell exists" >&2; exit 2; }
    mkdir -p "$common" "$dir/qmaster" "$dir/execd"
    cat >"$common/bootstrap" <<B
# Version: 9.1.4
#
admin_user              root
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         $common;$dir/qmaster
binary_path             $root/bin
qmaster_spool_dir       $dir/qmaster
security_mode           none
listener_threads        2
worker_threads          2
reader_threads          2
scheduler_threads       1
B
    echo "$host" >"$common/act_qmaster"
    echo "rsmapit" >"$common/cluster_name"
    # The host's name resolves to 127.0.0.1 only, whose name is localhost: without the alias qmaster
    # names itself localhost and refuses clients that call themselves by the host's name.
    echo "$host localhost" >"$common/host_aliases"
    cat >"$dir/global" <<C
conf_version           0
execd_spool_dir        $dir/execd
mailer                 /bin/true
xterm                  /usr/bin/xterm
load_sensor            NONE
prolog                 NONE
epilog                 NONE
shell_start_mode       posix_compliant
login_shells           sh,bash,ksh,csh,tcsh
min_uid                0
min_gid                0
user_lists             NONE
xuser_lists            NONE
projects               NONE
xprojects              NONE
enforce_project        false
enforce_user           auto
load_report_time       00:00:05
max_unheard            00:05:00
reschedule_unknown     00:00:00
loglevel               log_warning
administrator_mail     none
mail_tag               NONE
set_token_cmd          NONE
pag_cmd                NONE
token_extend_time      NONE
shepherd_cmd           NONE
qmaster_params         NONE
execd_params           NONE
reporting_params       accounting=true reporting=false flush_time=00:00:1 joblog=false sharelog=00:00:00
finished_jobs          100
gid_range              20000-20100
qlogin_command         builtin
qlogin_daemon          builtin
rlogin_command         builtin
rlogin_daemon          builtin
rsh_command            builtin
rsh_daemon             builtin
max_aj_instances       2000
max_aj_tasks           75000
max_u_jobs             0
max_jobs               0
max_advance_reservations 0
auto_user_oticket      0
auto_user_fshare       0
auto_user_default_project NONE
auto_user_delete_time  86400
delegated_file_staging false
jsv_url                NONE
gdi_request_limits     NONE
binding_params         enabled=true,implicit=false,mode=default,default_unit=C,on_any_host=false,filter=NONE
topology_file          NONE
C
    "$utilbin/spoolinit" classic libspoolc "$common;$dir/qmaster" init >/dev/null
    "$utilbin/spooldefaults" configuration "$dir/global" >/dev/null
    "$utilbin/spooldefaults" complexes "$root/util/resources/centry" >/dev/null
    "$utilbin/spooldefaults" usersets "$root/util/resources/usersets" >/dev/null
    "$utilbin/spooldefaults" managers root >/dev/null
    "$utilbin/spooldefaults" adminhosts "$host" >/dev/null
    "$utilbin/spooldefaults" submithosts "$host" >/dev/null 2>&1 || true
    [ -z "${FIRST_JOB_ID:-}" ] || echo $((FIRST_JOB_ID - 1)) >"$dir/qmaster/jobseqnum"
    ;;
qmaster)
    "$bin/sge_qmaster"
    i=0
    until qconf -sh >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 100 ] || { echo "ocs-cell: qmaster did not answer in 20 s" >&2; tail "$dir/qmaster/messages" >&2; exit 1; }
        sleep 0.2
    done
    qconf -as "$host" >/dev/null 2>&1 || true
    ;;
execd)
    "$bin/sge_execd"
    i=0
    until qhost -h "$host" 2>/dev/null | awk -v h="$host" '$1 == h && $4 != "-" { ok = 1 } END { exit !ok }'; do
        i=$((i + 1)); [ $i -lt 300 ] || { echo "ocs-cell: execd did not report in 60 s" >&2; exit 1; }
        sleep 0.2
    done
    ;;
stop)
    . "$(dirname "$0")/stop-daemons.sh"
    stop_daemons "$dir"/execd/*/execd.pid "$dir/qmaster/qmaster.pid"
    rm -rf "${root:?}/${cell:?}"
    ;;
*) echo "ocs-cell: unknown command $cmd" >&2; exit 2 ;;
esac
