#!/bin/sh
# Boots a real systemd (252 tested) as PID 1 of new PID/mount/UTS/IPC/net namespaces, for tests of the
# systemd device backend on hosts where PID 1 is not systemd ("Tests that use real components").
#
#   boot.sh start NAME   prints the host PID of the namespace's systemd once /run/systemd/private answers;
#                        the socket is reachable from the host as /proc/<PID>/root/run/systemd/private
#   boot.sh stop NAME [PID]
#                        SIGKILLs the namespace's init (the kernel then kills the whole PID namespace) and
#                        removes the cgroups systemd made (all under NAME in every hierarchy)
#
# systemd runs in cgroup NAME of every hierarchy (but memory), so everything it creates stays below NAME.
# Inside, private tmpfs on /run, /tmp, /var/tmp, /var/log/journal (mount -n), /proc of the new PID
# namespace, read-only /proc/sys, journald masked, and only a target of our own (--unit=): the default
# target would start the machine's services and let tmpfiles wipe /tmp.
set -eu
cmd=${1:?usage: boot.sh start|stop NAME [PID]}
name=${2:?usage: boot.sh start|stop NAME [PID]}
case $name in *[!A-Za-z0-9_.-]*|'') echo "bad cgroup name '$name'" >&2; exit 2;; esac
CG=/sys/fs/cgroup

# every cgroup hierarchy; with "join", those systemd is moved into (not memory: the caller may be held
# to a memory limit where it is). systemd makes its cgroups under NAME in all of them, memory included.
hierarchies() {
    for h in "$CG"/*; do
        [ -d "$h" ] && [ ! -L "$h" ] && [ -e "$h/cgroup.procs" ] || continue
        case ${1:-}:${h##*/} in join:memory) continue;; esac
        echo "$h"
    done
}

case $cmd in
inner)
    # Runs as PID 1 of the new namespaces, then becomes systemd.
    mount -n -t proc proc /proc
    for d in /run /tmp /var/tmp /var/log/journal; do
        mkdir -p "$d"
        mount -n -t tmpfs -o mode=755 tmpfs "$d"
    done
    chmod 1777 /tmp /var/tmp
    mount -n --bind /proc/sys /proc/sys
    mount -n -o remount,bind,ro /proc/sys
    mkdir -p /run/systemd/system
    for u in systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket \
             systemd-journald-audit.socket systemd-journal-flush.service systemd-tmpfiles-setup.service \
             systemd-tmpfiles-clean.timer; do
        ln -sf /dev/null "/run/systemd/system/$u"
    done
    cat > /run/systemd/system/rsmap-test.target <<'UNIT'
[Unit]
Description=rsmapd test target (nothing but the manager)
UNIT
    exec /lib/systemd/systemd --system --unit=rsmap-test.target --log-target=console --log-level=notice \
        --show-status=no
    ;;
start)
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    [ -x /lib/systemd/systemd ] || { echo "no /lib/systemd/systemd" >&2; exit 1; }
    [ -e "$CG/systemd/cgroup.procs" ] || { echo "no name=systemd hierarchy at $CG/systemd" >&2; exit 1; }
    log=${RSMAP_NSD_LOG:-/dev/null}
    self=$(readlink -f "$0")
    # a subshell that joins cgroup NAME everywhere, then turns into unshare (its child becomes systemd)
    (
        for h in $(hierarchies join); do
            mkdir -p "$h/$name"
            if [ -e "$h/cpuset.cpus" ]; then  # a new cpuset cgroup takes no task until cpus and mems are set
                cat "$h/cpuset.cpus" > "$h/$name/cpuset.cpus"
                cat "$h/cpuset.mems" > "$h/$name/cpuset.mems"
            fi
            echo 0 > "$h/$name/cgroup.procs"
        done
        exec setsid unshare --pid --fork --kill-child --mount --propagation private --uts --ipc --net \
            /bin/sh "$self" inner "$name"
    ) </dev/null >>"$log" 2>&1 &
    wrapper=$!
    i=0
    pid=
    while [ $i -lt 200 ]; do
        if [ -z "$pid" ]; then
            # the process in cgroup NAME that is PID 1 of its own PID namespace
            for p in $(find "$CG/systemd/$name" -name cgroup.procs -exec cat {} + 2>/dev/null); do
                if awk '/^NSpid:/ { exit !(NF == 3 && $3 == 1) }' "/proc/$p/status" 2>/dev/null; then
                    pid=$p
                    break
                fi
            done
        fi
        if [ -n "$pid" ] && [ -S "/proc/$pid/root/run/systemd/private" ]; then
            echo "$pid"
            exit 0
        fi
        if ! kill -0 "$wrapper" 2>/dev/null; then
            echo "namespace init exited early (log: $log)" >&2
            exit 1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "no /run/systemd/private after 20 s (init $pid, log: $log)" >&2
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    exit 1
    ;;
stop)
    pid=${3:-}
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    # anything left in NAME (there should be nothing once the PID namespace is gone)
    i=0
    while [ $i -lt 50 ]; do
        left=$(for h in $(hierarchies); do [ -d "$h/$name" ] && find "$h/$name" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -u)
        [ -z "$left" ] && break
        for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
        sleep 0.1
        i=$((i + 1))
    done
    rc=0
    for h in $(hierarchies); do
        [ -d "$h/$name" ] || continue
        find "$h/$name" -depth -type d -exec rmdir {} + 2>/dev/null || true
        if [ -d "$h/$name" ]; then echo "cannot remove $h/$name" >&2; rc=1; fi
    done
    exit $rc
    ;;
*)
    echo "usage: boot.sh start|stop NAME [PID]" >&2; exit 2;;
esac
