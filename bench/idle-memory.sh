#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Memory per idle TLS keep-alive connection (issue 17, item 5). A server gets N TLS connections,
# each with a full handshake and one POST of the 4 KB pod review answered (bench/tools/idle-conns.c),
# which then sit idle; its RSS is read before, with the N connections idle, and after they all
# closed. admitd (and, with IDLE_BEFORE=REV, admitd built from REV; IDLE_BEFORE_BIN=PATH: that admitd,
# already built) and nginx (Debian's, one worker, static 200 of admitd's answer; the worker's RSS)
# take turns, each started fresh for each count, ROUNDS times; medians are printed.
#
#   bench/idle-memory.sh [COUNTS="2000 10000"] [ROUNDS=1]
#
# "Idle" RSS is read once it has stopped moving (admitd gives an idle connection's buffers back a
# second after its last request), "after close" once it has stopped moving too (admitd trims its
# heap a second after the connections fell to a low-water mark).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
counts=${1:-"2000 10000"}
rounds=${2:-1}
review="$bench_root/tests/fixtures/pod-create.v1.review.json"
admitd_port=18481 nginx_port=18482
ulimit -n "$(ulimit -Hn)"

bench_build
bench_cert
IDLE="$bench_root/build-bench/bench/idle-conns"
before=${IDLE_BEFORE:-}
if [ -n "$before" ] && [ -n "${IDLE_BEFORE_BIN:-}" ]; then
    ADMITD_REV=$IDLE_BEFORE_BIN
elif [ -n "$before" ]; then
    bench_build_rev "$before"
fi

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# settle PID: waits until PID's RSS stays within 1% over three readings a second apart (120 s at
# most) and prints it.
settle() {
    local last now same=0
    last=$(rss_kb "$1")
    for _ in $(seq 1 120); do
        sleep 1
        now=$(rss_kb "$1")
        if [ $(( (now > last ? now - last : last - now) * 100 )) -le "$last" ]; then
            same=$((same + 1))
            [ $same -ge 3 ] && break
        else
            same=0
        fi
        last=$now
    done
    echo "$now"
}

# measure NAME PID PORT N: prints "NAME N start_kb idle_kb after_kb bytes_per_conn"
measure() {
    local name=$1 pid=$2 port=$3 n=$4 start idle after
    start=$(settle "$pid")
    coproc IDLE_CONNS { taskset -c "$CLIENT_CPU" "$IDLE" "$port" "$bench_tmp/cert.pem" "$review" "$n"; }
    read -r line <&"${IDLE_CONNS[0]}"
    case "$line" in "open $n failed 0") ;; *) echo "$name: $line" >&2 ;; esac
    idle=$(settle "$pid")
    echo close >&"${IDLE_CONNS[1]}"
    read -r line <&"${IDLE_CONNS[0]}"
    after=$(settle "$pid")
    exec {IDLE_CONNS[1]}>&-
    wait "$IDLE_CONNS_PID" 2>/dev/null || true
    echo "$name $n $start $idle $after $(( (idle - start) * 1024 / n ))"
}

stop() { kill "$1"; wait "$1" 2>/dev/null || true; }

answer=""
results="$bench_tmp/results"
: > "$results"
for round in $(seq 1 "$rounds"); do
    for n in $counts; do
        start_admitd $admitd_port tls --idle-timeout 900s
        pid=${bench_pids[-1]}
        if [ -z "$answer" ]; then
            answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
                     --data-binary @"$review" "https://127.0.0.1:$admitd_port/validate")
        fi
        measure admitd "$pid" $admitd_port "$n" | tee -a "$results"
        stop "$pid"
        if [ -n "$before" ]; then
            ADMITD="$ADMITD_REV" start_admitd $admitd_port tls --idle-timeout 900s
            pid=${bench_pids[-1]}
            measure "admitd@$before" "$pid" $admitd_port "$n" | tee -a "$results"
            stop "$pid"
        fi
        NGINX_CONNECTIONS=$((n + 100)) NGINX_KEEPALIVE=900s start_nginx $nginx_port tls "$answer"
        master=${bench_pids[-1]}
        measure nginx "$(pgrep -P "$master" | head -1)" $nginx_port "$n" | tee -a "$results"
        stop "$master"
    done
done

echo
echo "round by round above: server connections start_KB idle_KB after_close_KB bytes_per_idle_connection"
echo "medians over $rounds round(s); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $counts; do
    for name in admitd ${before:+"admitd@$before"} nginx; do
        per=$(awk -v s="$name" -v n="$n" '$1==s && $2==n {print $6}' "$results" | median)
        idle=$(awk -v s="$name" -v n="$n" '$1==s && $2==n {print $4}' "$results" | median)
        after=$(awk -v s="$name" -v n="$n" '$1==s && $2==n {print $5}' "$results" | median)
        start=$(awk -v s="$name" -v n="$n" '$1==s && $2==n {print $3}' "$results" | median)
        printf "%-16s %6d connections: %6.1f KB per idle connection; RSS %.1f MB at start, %.1f MB idle, %.1f MB after close\n" \
            "$name" "$n" "$(echo "$per / 1024" | bc -l)" "$(echo "$start / 1024" | bc -l)" \
            "$(echo "$idle / 1024" | bc -l)" "$(echo "$after / 1024" | bc -l)"
    done
done
