#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# admitd-bench against wrk, the reference closed-loop generator (issue figures 1 and 3, D15 revised).
#
#   1. Agreement: the same closed-loop workload (32 keep-alive connections, POST of REVIEW) driven
#      by wrk (one thread) and by admitd-bench --closed, against admitd's /validate over TLS and
#      plain HTTP. Aim: admitd-bench's requests/s within 10% of wrk's.
#   2. D15 (revised): requests per client CPU-second, each generator's CPU (user + system, all its
#      threads) read from /proc, against admitd and against nginx (one worker answering a constant
#      200) over TLS and plain HTTP. Aim: admitd-bench within 10% of wrk (>= 0.90x).
#   3. --threads 2 (D15): against nginx, admitd-bench --threads 2 on cores $SERVER_CPU and
#      $CLIENT_CPU beside --threads 1 on core $CLIENT_CPU: requests/s and the generator's CPU
#      seconds. Aim: more requests/s, from more than one core's worth of generator CPU. (On a
#      2-core machine the second thread shares the server's core: this shows the generator no
#      longer stops at one core, not a server's true peak.)
#
# Servers on core $SERVER_CPU, the generator on core $CLIENT_CPU. Each round runs every contender
# once, wrk first in odd rounds and admitd-bench first in even ones; medians are printed, and each
# ratio is also taken per round (the generators ran back to back) with the median of those.
#
#   bench/bench-vs-wrk.sh [ROUNDS=3] [SECONDS=10] [REVIEW=bench/reviews/pod-4k.v1.json]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
review=${3:-$bench_root/bench/reviews/pod-4k.v1.json}
review=$(cd "$(dirname "$review")" && pwd)/$(basename "$review")
export BENCH_REVIEW="$review"

bench_build
bench_tools
bench_cert
tls_port=18450
plain_port=18451
nginx_port=18452
nginx_tls_port=18453

start_admitd "$tls_port" tls
start_admitd "$plain_port" plain
answer=$(curl -sS -H 'Content-Type: application/json' --data-binary @"$review" "http://127.0.0.1:$plain_port/validate")
case "$answer" in *'"allowed":true'*) ;; *) echo "unexpected admitd answer: $answer" >&2; exit 1 ;; esac
start_nginx "$nginx_port" plain "$answer"
start_nginx "$nginx_tls_port" tls "$answer"

# contender name -> URL
declare -A url=(
    [admitd-tls]="https://127.0.0.1:$tls_port/validate"
    [admitd-http]="http://127.0.0.1:$plain_port/validate"
    [nginx-tls]="https://127.0.0.1:$nginx_tls_port/validate"
    [nginx-http]="http://127.0.0.1:$nginx_port/validate"
)
targets=(admitd-tls admitd-http nginx-tls nginx-http)

# run GENERATOR TARGET -> "req/s p50_ms p99_ms cpu_seconds" (and the busy-by-thread of admitd-bench
# in $bench_tmp/busy)
run() {
    local g=$1 t=$2 rps p50 p99 cpu ok err
    case "$g" in
    wrk) read -r rps p50 p99 cpu < <(run_wrk_cpu "${url[$t]}") ;;
    bench | bench-t2)
        if [ "$g" = bench ]; then
            read -r rps p50 p99 cpu ok err < <(run_bench "${url[$t]}" "$review")
        else
            read -r rps p50 p99 cpu ok err < <(CLIENT_CPU="$SERVER_CPU,$CLIENT_CPU" run_bench "${url[$t]}" \
                "$review" --closed --connections 32 --threads 2)
        fi
        # nginx answers a constant, so its answers carry someone else's uid: those are expected
        if [ "${t%%-*}" != nginx ] && [ "$err" -gt 0 ]; then
            echo "admitd-bench errors against $t:" >&2; cat "$bench_tmp/bench.out" >&2
        fi
        sed -n 's/^client CPU: .*busy by thread: //p' "$bench_tmp/bench.out" > "$bench_tmp/busy" ;;
    esac
    echo "$rps $p50 $p99 $(cat "$bench_tmp/client.cpu")"
}

# ratio_of_last A B: A's last value over B's (both generators of one round) for key A.B
record_ratio() {
    awk -v a="$(tail -1 "$bench_tmp/$1")" -v b="$(tail -1 "$bench_tmp/$2")" 'BEGIN {print (b > 0) ? a / b : 0}' \
        >> "$bench_tmp/$3"
}

echo "admitd $("$ADMITD" --version | cut -d' ' -f2), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), $(nginx -v 2>&1 | cut -d' ' -f3);" \
     "review $(basename "$review") ($(wc -c < "$review") B); ${rounds} rounds of ${secs} s; 32 connections"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round  target       generator     req/s   p50_ms  p99_ms  cpu_s  req/cpu_s  busy by thread"
for r in $(seq 1 "$rounds"); do
    gens=(wrk bench); [ $((r % 2)) -eq 0 ] && gens=(bench wrk)
    for t in "${targets[@]}"; do
        these=("${gens[@]}")
        [ "${t%%-*}" = nginx ] && these+=(bench-t2)
        for g in "${these[@]}"; do
            : > "$bench_tmp/busy"
            read -r rps p50 p99 cpu < <(run "$g" "$t")
            per=$(awk -v n="$rps" -v s="$secs" -v c="$cpu" 'BEGIN {printf "%.0f", (c > 0) ? n * s / c : 0}')
            printf '%-6s %-12s %-12s %8.0f  %6.3f  %6.3f  %5.2f  %9s  %s\n' "$r" "$t" "$g" "$rps" "$p50" "$p99" \
                "$cpu" "$per" "$(cat "$bench_tmp/busy")"
            k="$t.$g"
            echo "$rps" >> "$bench_tmp/$k.rps"; echo "$p50" >> "$bench_tmp/$k.p50"
            echo "$p99" >> "$bench_tmp/$k.p99"; echo "$cpu" >> "$bench_tmp/$k.cpu"
            echo "$per" >> "$bench_tmp/$k.per"
        done
        record_ratio "$t.bench.rps" "$t.wrk.rps" "$t.ratio"
        record_ratio "$t.bench.per" "$t.wrk.per" "$t.per_ratio"
        if [ "${t%%-*}" = nginx ]; then
            record_ratio "$t.bench-t2.rps" "$t.bench.rps" "$t.t2_ratio"
        fi
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

m() { median < "$bench_tmp/$1"; }
echo
echo "medians            wrk                                admitd-bench"
echo "target        req/s  p50/p99 ms    cpu_s  req/cpu_s    req/s  p50/p99 ms    cpu_s  req/cpu_s"
for t in "${targets[@]}"; do
    printf '%-12s %7.0f  %.3f/%.3f  %5.2f  %9.0f   %7.0f  %.3f/%.3f  %5.2f  %9.0f\n' "$t" \
        "$(m "$t.wrk.rps")" "$(m "$t.wrk.p50")" "$(m "$t.wrk.p99")" "$(m "$t.wrk.cpu")" "$(m "$t.wrk.per")" \
        "$(m "$t.bench.rps")" "$(m "$t.bench.p50")" "$(m "$t.bench.p99")" "$(m "$t.bench.cpu")" "$(m "$t.bench.per")"
done
echo
for t in admitd-tls admitd-http; do
    awk -v t="$t" -v q="$(m "$t.ratio")" 'BEGIN {d = (q - 1) * 100
        printf "1. agreement %s: admitd-bench %+.1f%% of wrk'\''s req/s, median of the rounds (aim: within 10%%): %s\n", t, d, (d <= 10 && d >= -10) ? "met" : "NOT met"}'
done
for t in "${targets[@]}"; do
    awk -v t="$t" -v q="$(m "$t.per_ratio")" -v w="$(m "$t.wrk.per")" -v b="$(m "$t.bench.per")" 'BEGIN {
        printf "2. D15 %s: per client CPU-second admitd-bench %.0f req, wrk %.0f req: %.2fx, median of the rounds (aim >= 0.90x): %s\n", t, b, w, q, (q >= 0.9) ? "met" : "NOT met"}'
done
for t in nginx-tls nginx-http; do
    awk -v t="$t" -v q="$(m "$t.t2_ratio")" -v r1="$(m "$t.bench.rps")" -v r2="$(m "$t.bench-t2.rps")" \
        -v c1="$(m "$t.bench.cpu")" -v c2="$(m "$t.bench-t2.cpu")" -v s="$secs" 'BEGIN {
        printf "3. --threads 2 %s: %.0f req/s from %.0f%% of a core, against --threads 1: %.0f req/s from %.0f%%; %.2fx, median of the rounds (aim > 1x from > 100%%): %s\n", t, r2, c2 / s * 100, r1, c1 / s * 100, q, (q > 1 && c2 / s > 1) ? "met" : "NOT met"}'
done
