#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Coordinated omission (issue figure 2): admitd-mockhook stalls its whole loop for 200 ms once a
# second (--stall 200ms/1s, a stop-the-world pause). A closed-loop generator stops sending while the
# server stalls, so the stall shows up in only one request per connection and its p99 stays small;
# an open-loop generator charges every request from its intended send time, so a fifth of the
# requests wait up to 200 ms and p99 lands near 190 ms. Contenders, alternating round by round:
#   wrk            wrk, one thread, 32 connections (closed loop)
#   bench-closed   admitd-bench --closed, 32 connections (same workload as wrk)
#   bench-rate     admitd-bench --rate RATE, up to 32 connections (open loop)
# Aim: bench-rate p99 >= 100 ms while wrk's is much less. Plain HTTP, mockhook on core
# $SERVER_CPU, the generator on core $CLIENT_CPU.
#
# Beware: wrk 4.x is not a raw closed loop in what it prints. Before reporting it "corrects" its
# histogram for coordinated omission (wrk.c: stats_correct(latency, runtime / (requests per
# connection)) adds the requests it would have sent during every long wait, HdrHistogram's
# recordValueWithExpectedInterval), so its p99 here lands near 190 ms too. The raw closed-loop figure
# is bench-closed's, the same workload with every answered request counted once.
#
#   bench/coordinated-omission.sh [ROUNDS=3] [SECONDS=10] [RATE=2000]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-2000}
review="$bench_root/bench/reviews/pod-4k.v1.json"
export BENCH_REVIEW="$review"

bench_build
bench_tools
port=18460
start_mockhook "$port" --behavior allow --stall 200ms/1s
target="http://127.0.0.1:$port/validate"

echo "admitd-mockhook --stall 200ms/1s; review $(basename "$review") ($(wc -c < "$review") B); ${rounds} rounds of ${secs} s; open-loop rate $rate req/s"
echo "round  generator      req/s   p50_ms   p99_ms"
for r in $(seq 1 "$rounds"); do
    for g in wrk bench-closed bench-rate; do
        case $g in
        wrk) read -r rps p50 p99 _ < <(run_wrk_cpu "$target") ;;
        bench-closed) read -r rps p50 p99 _ < <(run_bench "$target" "$review" --closed --connections 32) ;;
        bench-rate) read -r rps p50 p99 _ < <(run_bench "$target" "$review" --rate "$rate" --connections 32 --warmup 2s) ;;
        esac
        printf '%-6s %-12s %8.0f  %7.3f  %7.3f\n' "$r" "$g" "$rps" "$p50" "$p99"
        echo "$rps" >> "$bench_tmp/$g.rps"; echo "$p50" >> "$bench_tmp/$g.p50"; echo "$p99" >> "$bench_tmp/$g.p99"
    done
done
echo
echo "medians"
echo "generator        req/s   p50_ms   p99_ms"
for g in wrk bench-closed bench-rate; do
    printf '%-12s %9.0f  %7.3f  %7.3f\n' "$g" "$(median < "$bench_tmp/$g.rps")" "$(median < "$bench_tmp/$g.p50")" "$(median < "$bench_tmp/$g.p99")"
done
w=$(median < "$bench_tmp/wrk.p99"); c=$(median < "$bench_tmp/bench-closed.p99"); o=$(median < "$bench_tmp/bench-rate.p99")
awk -v w="$w" -v c="$c" -v o="$o" 'BEGIN {
    printf "2. open-loop p99 %.1f ms (aim >= 100 ms: %s); raw closed-loop p99 (bench-closed) %.1f ms, %.0fx less;\n", o, (o >= 100) ? "met" : "NOT met", c, o / c
    printf "   wrk prints p99 %.1f ms: %s\n", w, (w < o / 5) ? "much less" : "NOT much less (wrk 4.x corrects its closed-loop histogram for coordinated omission)" }'
