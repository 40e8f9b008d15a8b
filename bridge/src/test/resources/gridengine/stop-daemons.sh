# Sourced by sge-cell.sh and ocs-cell.sh: stop_daemons PIDFILE... stops each daemon named by a pid file
# (SIGTERM, up to 10 s for it to go, then SIGKILL); a missing file is a daemon that never started.
stop_daemons() {
    for f in "$@"; do
        if [ -f "$f" ]; then
            pid=$(cat "$f")
            kill "$pid" 2>/dev/null || true
            i=0
            while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
}
