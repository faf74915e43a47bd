#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# --workers 2 against --workers 1 (issue 17's figure: requests per server CPU-second, >= 0.95x): admitd
# /validate with the 4 KB pod AdmissionReview over TLS keep-alive, foundation.sh's method (server CPU
# from /proc, the workers, children of the parent, included). The servers and wrk (two threads, so
# both workers are driven) share the machine's cores; per CPU-second the figure does not depend on
# how the cores were shared. Rounds alternate between the two servers; medians and the median of
# the per-round ratios are printed.
#
#   bench/workers.sh [ROUNDS=5] [SECONDS=10]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-5}
secs=${2:-10}
export BENCH_REVIEW="$bench_root/tests/fixtures/pod-create.v1.review.json"
CPUS=${CPUS:-0,1}

bench_build
bench_cert
port_one=18461
port_two=18462
for w in 1 2; do
    port=$port_one; [ $w = 2 ] && port=$port_two
    port_free "$port"
    taskset -c "$CPUS" "$ADMITD" --workers "$w" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --shutdown-delay 0s 2>"$bench_tmp/admitd-$w.log" &
    bench_pids+=($!)
    wait_port "$port"
done
# both workers of the second are listening before it is measured
for _ in $(seq 1 200); do
    [ "$(grep -c 'serving admission on' "$bench_tmp/admitd-2.log")" -ge 2 ] && break
    sleep 0.05
done

hz=$(getconf CLK_TCK)
echo "admitd $("$ADMITD" --version | cut -d' ' -f2); wrk -t2 -c32, ${secs}s rounds; load: $(uptime | sed 's/.*load/load/')"
echo "round  workers  req/s  p50_ms  p99_ms  req_per_server_cpu_s"
for r in $(seq 1 "$rounds"); do
    for w in 1 2; do
        port=$port_one; pid=${bench_pids[0]}
        [ $w = 2 ] && port=$port_two && pid=${bench_pids[1]}
        t0=$(cpu_ticks "$pid")
        taskset -c "$CPUS" wrk -t2 -c32 -d"${secs}s" --latency -s "$bench_root/bench/post.lua" \
            "https://127.0.0.1:$port/validate" > "$bench_tmp/wrk.out"
        t1=$(cpu_ticks "$pid")
        read -r rps p50 p99 < <(awk '/Requests\/sec/ {rps=$2}
            function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
            $1=="50%" {p50=ms($2)} $1=="99%" {p99=ms($2)}
            END {printf "%s %.3f %.3f\n", rps, p50, p99}' "$bench_tmp/wrk.out")
        eff=$(awk -v rps="$rps" -v s="$secs" -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN {printf "%.0f", (t > 0 ? rps * s * hz / t : 0)}')
        echo "$r      $w        $rps  $p50  $p99  $eff"
        echo "$eff" >> "$bench_tmp/w$w.eff"; echo "$rps" >> "$bench_tmp/w$w.rps"
        eval "eff_$w=$eff"
    done
    awk -v a="$eff_2" -v b="$eff_1" 'BEGIN {print a / b}' >> "$bench_tmp/ratio"
done
e1=$(median < "$bench_tmp/w1.eff"); e2=$(median < "$bench_tmp/w2.eff")
echo "median req/s: --workers 1 $(median < "$bench_tmp/w1.rps"), --workers 2 $(median < "$bench_tmp/w2.rps")"
awk -v a="$e2" -v b="$e1" 'BEGIN {printf "requests per server CPU-second (median): --workers 1 %d, --workers 2 %d, ratio %.3fx\n", b, a, a/b}'
echo "median of per-round ratios (workers 2 / workers 1, per CPU-second): $(median < "$bench_tmp/ratio")x" \
     "(rounds: $(tr '\n' ' ' < "$bench_tmp/ratio"))"
