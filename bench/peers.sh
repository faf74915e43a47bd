#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# admitd against its peers (issue figure 4), all over TLS keep-alive with the same ECDSA P-256
# certificate, one at a time on core $SERVER_CPU, the generator on core $CLIENT_CPU:
#   admitd-validate  admitd (default plugins) POST /validate
#   admitd-admit     the same admitd, POST /admit (both phases)
#   go-webhook       bench/peers/go-webhook (Go standard library, GOMAXPROCS=1) POST /validate
#   nginx            nginx, one worker, a constant 200 with admitd's /validate answer (static)
# Phase 1, closed loop: wrk (one thread) and admitd-bench --closed, 32 connections each; rounds
# alternate the contenders. Phase 2, open loop: admitd-bench --rate at half of admitd /validate's
# closed-loop peak (the higher of the two generators' medians), up to 32 connections, latency from
# each request's intended send time, after a 2 s warmup (the first 32 TLS handshakes cost the
# generator ~50 ms, and an open loop would charge that to the requests due meanwhile). Aim: admitd >= 3x the Go webhook's closed-loop requests/s.
#
#   bench/peers.sh [ROUNDS=3] [SECONDS=10] [REVIEW=bench/reviews/pod-4k.v1.json]
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
admitd_port=18470
go_port=18471
nginx_port=18472

start_admitd "$admitd_port" tls
start_go_webhook "$go_port"
answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' --data-binary @"$review" \
         "https://127.0.0.1:$admitd_port/validate")
case "$answer" in *'"allowed":true'*) ;; *) echo "unexpected admitd answer: $answer" >&2; exit 1 ;; esac
go_answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' --data-binary @"$review" \
            "https://127.0.0.1:$go_port/validate")
case "$go_answer" in *'"allowed":true'*) ;; *) echo "unexpected go-webhook answer: $go_answer" >&2; exit 1 ;; esac
start_nginx "$nginx_port" tls "$answer"

declare -A url=(
    [admitd-validate]="https://127.0.0.1:$admitd_port/validate"
    [admitd-admit]="https://127.0.0.1:$admitd_port/admit"
    [go-webhook]="https://127.0.0.1:$go_port/validate"
    [nginx]="https://127.0.0.1:$nginx_port/validate"
)
targets=(admitd-validate admitd-admit go-webhook nginx)

echo "admitd $("$ADMITD" --version | cut -d' ' -f2), $(head -1 "$bench_tmp/go-webhook.log" | sed 's/.*(\(.*\))/\1/'), $(nginx -v 2>&1 | cut -d' ' -f3);" \
     "review $(basename "$review") ($(wc -c < "$review") B); ${rounds} rounds of ${secs} s"
echo "== closed loop, 32 connections"
echo "round  target           generator      req/s   p50_ms  p99_ms  client_cpu%"
for r in $(seq 1 "$rounds"); do
    for t in "${targets[@]}"; do
        for g in wrk admitd-bench; do
            if [ "$g" = wrk ]; then
                read -r rps p50 p99 cpu < <(run_wrk_cpu "${url[$t]}")
            else
                read -r rps p50 p99 cpu ok err < <(run_bench "${url[$t]}" "$review")
                if [ "$t" != nginx ] && [ "$err" -gt 0 ]; then
                    echo "admitd-bench errors against $t:" >&2; cat "$bench_tmp/bench.out" >&2
                fi
            fi
            printf '%-6s %-16s %-12s %8.0f  %6.3f  %6.3f  %5s\n' "$r" "$t" "$g" "$rps" "$p50" "$p99" "$cpu"
            k="$t.$g"; echo "$rps" >> "$bench_tmp/$k.rps"; echo "$cpu" >> "$bench_tmp/$k.cpu"
        done
    done
    for g in wrk admitd-bench; do
        awk -v a="$(tail -1 "$bench_tmp/admitd-validate.$g.rps")" -v go="$(tail -1 "$bench_tmp/go-webhook.$g.rps")" \
            'BEGIN {print a / go}' >> "$bench_tmp/go-ratio.$g"
    done
done
peak=$(for g in wrk admitd-bench; do median < "$bench_tmp/admitd-validate.$g.rps"; done | sort -g | tail -1)
rate=$(awk -v p="$peak" 'BEGIN {printf "%d", p / 2}')

echo "== open loop: admitd-bench --rate $rate (half of admitd /validate's closed-loop peak $peak), up to 32 connections"
echo "round  target           achieved   p50_ms    p99_ms  answered  errors"
for r in $(seq 1 "$rounds"); do
    for t in "${targets[@]}"; do
        read -r rps p50 p99 cpu ok err < <(run_bench "${url[$t]}" "$review" --rate "$rate" --connections 32 --warmup 2s)
        [ "$t" = nginx ] && { ok=$((ok + err)); err=0; } # constant answers: uid mismatches expected
        printf '%-6s %-16s %8.0f  %7.3f  %8.3f  %8s  %6s\n' "$r" "$t" "$rps" "$p50" "$p99" "$ok" "$err"
        k="$t.open"; echo "$rps" >> "$bench_tmp/$k.rps"; echo "$p50" >> "$bench_tmp/$k.p50"; echo "$p99" >> "$bench_tmp/$k.p99"
    done
done

echo
echo "medians          closed req/s (wrk | admitd-bench)   open loop at $rate req/s: achieved, p50 / p99 ms"
for t in "${targets[@]}"; do
    printf '%-16s %9.0f | %-9.0f                  %7.0f, %.3f / %.3f\n' "$t" \
        "$(median < "$bench_tmp/$t.wrk.rps")" "$(median < "$bench_tmp/$t.admitd-bench.rps")" \
        "$(median < "$bench_tmp/$t.open.rps")" "$(median < "$bench_tmp/$t.open.p50")" "$(median < "$bench_tmp/$t.open.p99")"
done
for g in wrk admitd-bench; do
    a=$(median < "$bench_tmp/admitd-validate.$g.rps"); m=$(median < "$bench_tmp/admitd-admit.$g.rps")
    go=$(median < "$bench_tmp/go-webhook.$g.rps"); n=$(median < "$bench_tmp/nginx.$g.rps")
    awk -v g="$g" -v a="$a" -v m="$m" -v go="$go" -v n="$n" -v q="$(median < "$bench_tmp/go-ratio.$g")" 'BEGIN {
        printf "4. (%s) admitd /validate = %.2fx go-webhook (of medians; median of the rounds %.2fx; aim >= 3x: %s), /admit = %.2fx go-webhook; admitd /validate = %.2fx nginx\n",
               g, a / go, q, (q >= 3) ? "met" : "NOT met", m / go, a / n }'
done
