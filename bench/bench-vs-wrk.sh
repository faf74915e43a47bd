#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# admitd-bench against wrk, the reference closed-loop generator (issue figures 1 and 3, D15).
#
#   1. Agreement: the same closed-loop workload (32 keep-alive connections, POST of REVIEW to
#      admitd's /validate) driven by wrk (one thread) and by admitd-bench --closed, over TLS and over
#      plain HTTP. Aim: admitd-bench's requests/s within 10% of wrk's.
#   3. Capacity (INTERFACE.md D15): over plain HTTP against nginx (one worker, a constant 200), the
#      rate each generator drives from its one core and its own CPU (user + system); aim: admitd-bench
#      >= 1.5x wrk's one-thread rate. Over TLS, admitd-bench's own CPU at admitd's peak (from 1).
#
# Servers on core $SERVER_CPU, the generator on core $CLIENT_CPU. Each round runs every contender
# once, wrk first in odd rounds and admitd-bench first in even ones; medians are printed.
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

start_admitd "$tls_port" tls
start_admitd "$plain_port" plain
answer=$(curl -sS -H 'Content-Type: application/json' --data-binary @"$review" "http://127.0.0.1:$plain_port/validate")
case "$answer" in *'"allowed":true'*) ;; *) echo "unexpected admitd answer: $answer" >&2; exit 1 ;; esac
start_nginx "$nginx_port" plain "$answer"

# contender name -> URL
declare -A url=(
    [admitd-tls]="https://127.0.0.1:$tls_port/validate"
    [admitd-http]="http://127.0.0.1:$plain_port/validate"
    [nginx-http]="http://127.0.0.1:$nginx_port/validate"
)
targets=(admitd-tls admitd-http nginx-http)

echo "admitd $("$ADMITD" --version | cut -d' ' -f2), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), $(nginx -v 2>&1 | cut -d' ' -f3);" \
     "review $(basename "$review") ($(wc -c < "$review") B); ${rounds} rounds of ${secs} s; 32 connections"
echo "round  target       generator     req/s   p50_ms  p99_ms  client_cpu%"
for r in $(seq 1 "$rounds"); do
    gens=(wrk admitd-bench); [ $((r % 2)) -eq 0 ] && gens=(admitd-bench wrk)
    for t in "${targets[@]}"; do
        for g in "${gens[@]}"; do
            if [ "$g" = wrk ]; then
                read -r rps p50 p99 cpu < <(run_wrk_cpu "${url[$t]}")
            else
                read -r rps p50 p99 cpu ok err < <(run_bench "${url[$t]}" "$review")
                # nginx answers a constant, so its answers carry someone else's uid: those are expected
                if [ "$t" != nginx-http ] && [ "$err" -gt 0 ]; then
                    echo "admitd-bench errors against $t:" >&2; cat "$bench_tmp/bench.out" >&2
                fi
            fi
            printf '%-6s %-12s %-12s %8.0f  %6.3f  %6.3f  %5s\n' "$r" "$t" "$g" "$rps" "$p50" "$p99" "$cpu"
            k="$t.$g"
            echo "$rps" >> "$bench_tmp/$k.rps"; echo "$p50" >> "$bench_tmp/$k.p50"
            echo "$p99" >> "$bench_tmp/$k.p99"; echo "$cpu" >> "$bench_tmp/$k.cpu"
        done
        # the two generators ran back to back: their ratio in this round is less exposed to noise
        awk -v b="$(tail -1 "$bench_tmp/$t.admitd-bench.rps")" -v w="$(tail -1 "$bench_tmp/$t.wrk.rps")" \
            'BEGIN {print b / w}' >> "$bench_tmp/$t.ratio"
    done
done

echo
echo "medians                          wrk                          admitd-bench"
echo "target        req/s  p50/p99 ms  cpu%     req/s  p50/p99 ms  cpu%   bench/wrk: of medians, median of rounds; best wrk | bench"
for t in "${targets[@]}"; do
    w=$(median < "$bench_tmp/$t.wrk.rps"); b=$(median < "$bench_tmp/$t.admitd-bench.rps")
    printf '%-12s %7.0f  %.3f/%.3f  %4.0f   %7.0f  %.3f/%.3f  %4.0f   %.2fx, %.2fx; %.0f | %.0f\n' "$t" \
        "$w" "$(median < "$bench_tmp/$t.wrk.p50")" "$(median < "$bench_tmp/$t.wrk.p99")" "$(median < "$bench_tmp/$t.wrk.cpu")" \
        "$b" "$(median < "$bench_tmp/$t.admitd-bench.p50")" "$(median < "$bench_tmp/$t.admitd-bench.p99")" \
        "$(median < "$bench_tmp/$t.admitd-bench.cpu")" "$(awk -v b="$b" -v w="$w" 'BEGIN {print b/w}')" \
        "$(median < "$bench_tmp/$t.ratio")" "$(sort -g "$bench_tmp/$t.wrk.rps" | tail -1)" \
        "$(sort -g "$bench_tmp/$t.admitd-bench.rps" | tail -1)"
done
echo
for t in admitd-tls admitd-http; do
    awk -v t="$t" -v q="$(median < "$bench_tmp/$t.ratio")" 'BEGIN {d = (q - 1) * 100
        printf "1. agreement %s: admitd-bench %+.1f%% of wrk, median of the rounds (aim: within 10%%): %s\n", t, d, (d <= 10 && d >= -10) ? "met" : "NOT met"}'
done
w=$(median < "$bench_tmp/nginx-http.wrk.rps"); b=$(median < "$bench_tmp/nginx-http.admitd-bench.rps")
wc_=$(median < "$bench_tmp/nginx-http.wrk.cpu"); bc=$(median < "$bench_tmp/nginx-http.admitd-bench.cpu")
awk -v b="$b" -v w="$w" -v wc="$wc_" -v bc="$bc" -v q="$(median < "$bench_tmp/nginx-http.ratio")" 'BEGIN {
    printf "3. D15 plain HTTP vs nginx: admitd-bench drives %.2fx wrk'\''s one-thread rate, median of the rounds (aim >= 1.5x): %s\n", q, (q >= 1.5) ? "met" : "NOT met"
    printf "   per client CPU-second: wrk %.0f req, admitd-bench %.0f req (%.2fx)\n", w/(wc/100), b/(bc/100), (b/(bc/100))/(w/(wc/100)) }'
echo "3. D15 TLS: admitd-bench's own CPU at admitd's peak ($(median < "$bench_tmp/admitd-tls.admitd-bench.rps") req/s):" \
     "$(median < "$bench_tmp/admitd-tls.admitd-bench.cpu")% of one core (wrk's: $(median < "$bench_tmp/admitd-tls.wrk.cpu")%)"
