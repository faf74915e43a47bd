#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Connection burst (INTERFACE.md D9): admitd (Release, default plugins, pinned to core 0) takes
# bursts of N new TLS connections opened at once by bench/tools/burst.c (core 1), each doing a full
# handshake and one POST of the 4 KB pod review. Prints the quantiles of the time from a burst's
# start to each connection's answer, over all bursts; then the same with keep-alive traffic running
# beside it (wrk, 8 connections) to show what a burst costs requests already in flight.
#
#   bench/burst.sh [CONNECTIONS=100] [BURSTS=20]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
conns=${1:-100}
bursts=${2:-20}
review="$bench_root/tests/fixtures/pod-create.v1.review.json"
export BENCH_REVIEW="$review"

bench_build
bench_cert
port=18446
taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
    --tls-private-key-file "$bench_tmp/key.pem" 2>"$bench_tmp/admitd.log" &
bench_pids+=($!)
wait_port "$port"

echo "== bursts alone"
taskset -c "$CLIENT_CPU" "$bench_root/build-bench/bench/burst" "$port" "$bench_tmp/cert.pem" "$review" "$conns" "$bursts"

echo "== keep-alive traffic (wrk, 8 connections) while the bursts run"
secs=$((bursts / 4 + 8))
taskset -c "$CLIENT_CPU" wrk -t1 -c8 -d"${secs}s" --latency -s "$bench_root/bench/post.lua" \
    "https://127.0.0.1:$port/validate" > "$bench_tmp/wrk-during.out" &
wrk_pid=$!
sleep 2
taskset -c "$CLIENT_CPU" "$bench_root/build-bench/bench/burst" "$port" "$bench_tmp/cert.pem" "$review" "$conns" "$bursts"
wait "$wrk_pid"
grep -E "Requests/sec|^ +(50|99)%" "$bench_tmp/wrk-during.out" | sed 's/^/wrk during bursts: /'
