#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Admission chain benchmark: what running the compiled-in plugins costs. One admitd with its default
# plugin set serves both paths; wrk (one thread, 32 connections, TLS keep-alive) alternates round by
# round between
#   validate  POST /validate: decode + the validating phase (no default plugin applies to a pod)
#   admit     POST /admit: decode + both phases; DefaultTolerationSeconds adds two tolerations, so
#             the object is copied, mutated, diffed, and the answer carries a base64 JSON Patch
# on bench/reviews/pod-create-untolerated.v1.json (a 4 KB pod CREATE without tolerations), and
#   admit-unchanged  POST /admit of tests/fixtures/pod-create.v1.review.json, the same pod with the
#             tolerations already there: both phases run, nothing changes, no patch.
# Medians and the admit/validate ratio are printed, then the chain's in-process cost per request
# (bench/tools/chain-cost.c: no sockets, no TLS) on the same review with and without mutation.
#
#   bench/chain.sh [ROUNDS=3] [SECONDS=10]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
review="$bench_root/bench/reviews/pod-create-untolerated.v1.json"
unchanged="$bench_root/tests/fixtures/pod-create.v1.review.json"

bench_build
bench_cert
port=18445
taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
    --tls-private-key-file "$bench_tmp/key.pem" 2>"$bench_tmp/admitd.log" &
bench_pids+=($!)
wait_port "$port"

for path in validate admit; do
    answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
             --data-binary @"$review" "https://127.0.0.1:$port/$path")
    case "$path:$answer" in
    validate:*'"allowed":true'*) ;;
    admit:*'"patchType":"JSONPatch"'*) ;;
    *) echo "unexpected /$path answer: $answer" >&2; exit 1 ;;
    esac
    echo "/$path answer: ${#answer} B"
done

echo "admitd $("$ADMITD" --version | cut -d' ' -f2); body $(wc -c < "$review") B"
echo "round  contender  req/s  p50_ms  p99_ms"
for r in $(seq 1 "$rounds"); do
    for c in validate admit admit-unchanged; do
        path=${c%-unchanged}; body=$review; [ "$c" = admit-unchanged ] && body=$unchanged
        read -r rps p50 p99 < <(run_wrk "https://127.0.0.1:$port/$path" "$body")
        echo "$r      $c  $rps  $p50  $p99"
        echo "$rps" >> "$bench_tmp/$c.rps"; echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"
    done
done
v=$(median < "$bench_tmp/validate.rps")
for c in validate admit admit-unchanged; do
    m=$(median < "$bench_tmp/$c.rps")
    echo "median $c: $m req/s (p50 $(median < "$bench_tmp/$c.p50") ms, p99 $(median < "$bench_tmp/$c.p99") ms)," \
         "$(awk -v a="$m" -v v="$v" 'BEGIN {printf "%.2fx", a/v}') of validate"
done
echo "in-process cost, pinned to core $SERVER_CPU:"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$review"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$unchanged"
