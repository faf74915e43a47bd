#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Issue 15's figure, full-admit / bare-validate, with admitd saturated. bench/chain.sh divides
# requests by the server's CPU-seconds while one wrk core sets the rate. On a 2-core machine that
# core cannot saturate a bare /validate, so admitd's CPU per request there depends on how many
# requests each wakeup finds, and it moved by 1.7x between runs of one build. Here each admitd runs
# in a CPU cgroup capped at QUOTA% of a core (CFS quota, cgroup v1 or v2; needs root), so wrk
# always has more requests waiting than admitd can answer. req/s then is QUOTA% of a core divided
# by the CPU a request costs, and the ratio of two contenders' req/s is the ratio of their
# throughputs at saturation.
#   bare-validate  POST /validate, every plugin disabled (decode + encode)
#   full-admit     POST /admit, kube's whole default set over bench/cluster/full.yaml
# both on bench/reviews/pod-create-untolerated.v1.json, rounds alternating. With more admitd
# binaries (e.g. two builds for a before/after), every binary's pair runs in each round.
#
#   bench/chain-saturated.sh [ROUNDS=5] [SECONDS=6] [QUOTA=40] [ADMITD...]
# Without ADMITD, build-bench/admitd (built first).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-5}
secs=${2:-6}
quota=${3:-40}
shift $(($# < 3 ? $# : 3))
review="$bench_root/bench/reviews/pod-create-untolerated.v1.json"
export BENCH_REVIEW=$review

if [ $# -eq 0 ]; then
    bench_build
    set -- "$ADMITD"
fi
bench_cert

# The cgroup every admitd runs in, capped at quota% of one core.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    cg=/sys/fs/cgroup/admitd-saturated.$$
    mkdir "$cg" 2>/dev/null || { echo "cannot create $cg (needs root and the cpu controller)" >&2; exit 1; }
    echo "$((quota * 1000)) 100000" > "$cg/cpu.max"
else
    cg=/sys/fs/cgroup/cpu/admitd-saturated.$$
    mkdir "$cg" 2>/dev/null || { echo "cannot create $cg (needs root and cgroup v1's cpu controller)" >&2; exit 1; }
    echo 100000 > "$cg/cpu.cfs_period_us"
    echo $((quota * 1000)) > "$cg/cpu.cfs_quota_us"
fi
remove_cgroup() {
    bench_cleanup
    rmdir "$cg" 2>/dev/null || true
}
trap remove_cgroup EXIT

defaults=$("$1" --list-plugins | awk '$(NF-1) == "on" {print $1}' | paste -sd, -)
port=18460
names=() ports=()
start() { # NAME BINARY [FLAGS...]
    local name=$1 bin=$2
    shift 2
    port_free "$port"
    taskset -c "$SERVER_CPU" "$bin" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --shutdown-delay 0s "$@" 2>"$bench_tmp/$name.log" &
    bench_pids+=($!)
    echo $! > "$cg/cgroup.procs"
    wait_port "$port"
    names+=("$name") ports+=("$port")
    port=$((port + 1))
}
for i in $(seq 1 $#); do
    bin=${!i}
    tag=$([ $# -gt 1 ] && echo "$i:" || true)
    start "${tag}bare-validate" "$bin" --disable-admission-plugins "$defaults"
    start "${tag}full-admit" "$bin" --cluster-state "$bench_root/bench/cluster/full.yaml"
    echo "${tag}admitd: $bin"
done

echo "admitd capped at $quota% of core $SERVER_CPU, wrk on core $CLIENT_CPU; $rounds rounds of $secs s"
echo "round  contender  req/s  p50_ms  p99_ms"
for r in $(seq 1 "$rounds"); do
    for k in "${!names[@]}"; do
        case ${names[$k]} in *bare-validate) path=validate ;; *) path=admit ;; esac
        read -r rps p50 p99 < <(run_wrk "https://127.0.0.1:${ports[$k]}/$path")
        echo "$r  ${names[$k]}  $rps  $p50  $p99"
        echo "$rps" >> "$bench_tmp/${names[$k]//:/_}.rps"
    done
done
for i in $(seq 1 $#); do
    tag=$([ $# -gt 1 ] && echo "$i:" || true)
    bare=$(median < "$bench_tmp/${tag//:/_}bare-validate.rps")
    full=$(median < "$bench_tmp/${tag//:/_}full-admit.rps")
    awk -v t="$tag" -v b="$bare" -v f="$full" -v q="$quota" 'BEGIN {
        printf "%smedian bare-validate %.0f req/s (%.2f us of CPU a request), full-admit %.0f req/s (%.2f us)\n",
               t, b, q * 1e4 / b, f, q * 1e4 / f
        printf "%sfull-admit / bare-validate at saturation: %.2fx (aim >= 0.80x)\n", t, f / b }'
done
