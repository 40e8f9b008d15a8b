#!/bin/bash
# The daemon and its protocol benchmark (docs/benchmarks.md): what rsmap-hook prolog and epilog add to a job
# start over the exec of a no-op program (hook-timing), and the exchange alone after 2 ms idle (hook-phases), for
# bin/rsmapd against the floor (floor-rsmapd.c: a single-threaded C server doing only what a grant must) in
# alternating rounds, each server started afresh on the example host, pinned apart from the hooks.
#
# Usage, from the checkout after `mvn -B -q -DskipTests package`, as root or any user:
#   bridge/src/test/sh/hook-bench.sh [ROUNDS [JOBS [WARM]]]          (default 3 rounds, 300 jobs, 5000 to warm)
# HOOK_BENCH_CONFIGS: one per line, LABEL|OPTIONS; OPTIONS "default" (bin/rsmapd's own), "floor", "javafloor" (the
# floor's work in Java, one thread: bench/JavaFloor.java), "javafloor-handoff" (the same, each command handed to a
# worker thread), "wirefloor" (the floor's work behind rsmapd's own socket server: bench/WireFloor.java),
# "checkout:DIR" (bin/rsmapd of another checkout built the same way: a baseline commit in the same rounds), or JVM options
# given to bin/rsmapd through RSMAPD_JAVA_OPTS (which also turns off bin/rsmapd's class-data archive: to compare
# options alone, give the default's options as a config too). HOOK_BENCH_DIR: the directory of the servers' state and journal
# (default: a new one under /var/tmp, on the disk: a journal on tmpfs measures no disk). HOOK_BENCH_CPUS
# "HOOKS SERVER" (default "0 1"). Each wait is bounded: a server that ends or does not serve within 10 s ends
# the run with its output (exit 1).
set -euo pipefail
rounds=${1:-3}
jobs=${2:-300}
warm=${3:-5000}
read -r hook_cpu server_cpu <<< "${HOOK_BENCH_CPUS:-0 1}"
here=$(cd "$(dirname "$0")/../../../.." && pwd)
cd "$here"
[ -x bridge/target/rsmap-hook ] && [ -f bridge/target/native/librsmap-client.a ] || {
    echo "hook-bench: build first: mvn -B -q -DskipTests package" >&2
    exit 2
}
pid=""
tools=""
state=""
cleanup() {
    local status=$?
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    [ -n "$tools" ] && rm -rf "$tools"
    [ -z "${HOOK_BENCH_DIR:-}" ] && [ -n "$state" ] && rm -rf "$state"
    exit "$status"
}
trap cleanup EXIT
tools=$(mktemp -d /tmp/hook-bench.XXXXXX)
if [ -n "${HOOK_BENCH_DIR:-}" ]; then
    mkdir -p "$HOOK_BENCH_DIR"
    state=$(cd "$HOOK_BENCH_DIR" && pwd) # the configuration resolves a relative path against its own directory
else
    state=$(mktemp -d /var/tmp/hook-bench-state.XXXXXX)
fi
gcc -O2 -o "$tools/noop" bridge/src/test/c/noop.c
gcc -O2 -o "$tools/hook-timing" bridge/src/test/c/hook-timing.c
gcc -O2 -o "$tools/hook-phases" bridge/src/test/c/hook-phases.c
gcc -O2 -std=c11 -D_GNU_SOURCE -Ibridge/src/main/c -o "$tools/floor-rsmapd" bridge/src/test/c/floor-rsmapd.c \
    bridge/target/native/librsmap-client.a
configs=${HOOK_BENCH_CONFIGS:-$'rsmapd|default\nfloor|floor'}
if [ -n "$(cat /sys/kernel/tracing/set_event 2>/dev/null)" ]; then
    echo "hook-bench: kernel trace events are set (/sys/kernel/tracing/set_event): every system call pays for them" >&2
fi

start() { # LABEL OPTIONS: a fresh state directory, the server started and warmed
    rm -rf "$state/run"
    mkdir -p "$state/run"
    cp examples/complexes "$state/run/"
    sed -e "s#^socket .*#socket = $state/run/rsmapd.sock#" -e "s#^state_dir .*#state_dir = $state/run/state#" \
        -e "s#^cdi_dir .*#cdi_dir = $state/run/cdi#" examples/rsmapd.conf > "$state/run/rsmapd.conf"
    echo "admin_user = $(id -un)" >> "$state/run/rsmapd.conf"
    case "$2" in
        floor)
            mkdir -p "$state/run/state"
            taskset -c "$server_cpu" "$tools/floor-rsmapd" "$state/run/rsmapd.sock" "$state/run/state" > "$state/server.log" 2>&1 &
            ;;
        javafloor | javafloor-handoff | wirefloor)
            # the floor's work in Java (bench/JavaFloor.java, bench/WireFloor.java), with bin/rsmapd's own JVM
            # options (without its class-data archive)
            local main=rsmap.bench.JavaFloor extra=""
            [ "$2" = javafloor-handoff ] && extra=handoff
            [ "$2" = wirefloor ] && main=rsmap.bench.WireFloor
            mkdir -p "$state/run/state"
            taskset -c "$server_cpu" java $(sed -n 's/^opts=\${RSMAPD_JAVA_OPTS:-\(.*\)}$/\1/p' bin/rsmapd) \
                --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp bridge/target/test-classes:bridge/target/rsmap.jar \
                "$main" "$state/run/rsmapd.sock" "$state/run/state" $extra > "$state/server.log" 2>&1 &
            ;;
        default)
            taskset -c "$server_cpu" bin/rsmapd --config "$state/run/rsmapd.conf" > "$state/server.log" 2>&1 &
            ;;
        checkout:*) # bin/rsmapd of another built checkout (a baseline commit), with its own defaults
            taskset -c "$server_cpu" "${2#checkout:}/bin/rsmapd" --config "$state/run/rsmapd.conf" > "$state/server.log" 2>&1 &
            ;;
        *)
            RSMAPD_JAVA_OPTS="$2" taskset -c "$server_cpu" bin/rsmapd --config "$state/run/rsmapd.conf" > "$state/server.log" 2>&1 &
            ;;
    esac
    pid=$!
    for _ in $(seq 100); do
        [ -S "$state/run/rsmapd.sock" ] && break
        kill -0 "$pid" 2> /dev/null || break # ended before it served
        sleep 0.1
    done
    if [ ! -S "$state/run/rsmapd.sock" ]; then
        echo "hook-bench: $1 did not serve within 10 s; its output:" >&2
        cat "$state/server.log" >&2
        exit 1
    fi
    taskset -c "$hook_cpu" "$tools/hook-phases" "$state/run/rsmapd.sock" "$warm" > /dev/null
}

stop() {
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
}

echo "rounds of $jobs jobs, warmed by $warm; hooks on CPU $hook_cpu, servers on CPU $server_cpu; state in $state"
printf '%-5s %-10s %8s %8s %8s %10s %10s\n' round server no-op prolog+ epilog+ start@2ms end@2ms
for r in $(seq "$rounds"); do
    while IFS='|' read -r label opts; do
        [ -z "$label" ] && continue
        start "$label" "$opts"
        t=$(RSMAP_SOCKET="$state/run/rsmapd.sock" USER=$(id -un) RSMAP_REQUEST=nic=1 \
            taskset -c "$hook_cpu" "$tools/hook-timing" "$jobs" "$tools/noop" bridge/target/rsmap-hook)
        p=$(taskset -c "$hook_cpu" "$tools/hook-phases" "$state/run/rsmapd.sock" 1000 2000)
        stop
        # "no-op exec median A us; prolog B us (adds C); epilog D us (adds E)" and "... total start F; JOB_END exchange G us"
        noop=$(sed -E 's/.*no-op exec median ([0-9-]+) us.*/\1/' <<< "$t")
        pro=$(sed -E 's/.*prolog [0-9]+ us \(adds ([0-9-]+)\).*/\1/' <<< "$t")
        epi=$(sed -E 's/.*epilog [0-9]+ us \(adds ([0-9-]+)\).*/\1/' <<< "$t")
        st=$(sed -E 's/.*total start ([0-9]+);.*/\1/' <<< "$p")
        en=$(sed -E 's/.*JOB_END exchange ([0-9]+) us.*/\1/' <<< "$p")
        printf '%-5s %-10s %8s %8s %8s %10s %10s\n' "$r" "$label" "$noop" "$pro" "$epi" "$st" "$en"
    done <<< "$configs"
done
echo "(µs, medians: the no-op exec; what the prolog and the epilog add over it; connect + INIT + JOB_START and INIT + JOB_END after 2 ms idle)"
