#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# A dead webhook at failurePolicy Ignore, with and without the circuit breaker (issue 18): one
# admitd-mockhook that never answers (--behavior hang) behind one validating webhook with
# timeoutSeconds 1, and two admitd in front of it, one plain and one with
# --webhook-circuit-breaker 5/10s. admitd-bench drives each in open loop at RATE req/s over TLS
# keep-alive (4 KB pod review), round by round alternating. Every request is allowed (Ignore);
# what differs is how long it waits. Without the breaker every request waits the webhook's full
# timeoutSeconds; with it only the first 5 and one probe per 10 s cool-down do.
# The first 3 s (the breaker opening) are warm-up, not measured: the figures are the steady state.
# admitd is pinned to core 0; admitd-bench and the mockhook to core 1.
#
#   bench/breaker.sh [ROUNDS=3] [SECONDS=10] [RATE=100]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-100}
review="$bench_root/bench/reviews/pod-4k.v1.json"

bench_build
BENCH="$bench_root/build-bench/bench/admitd-bench"
MOCK="$bench_root/build-bench/bench/admitd-mockhook"
bench_cert
ca_b64=$(base64 -w0 "$bench_tmp/cert.pem")
base=${BREAKER_BENCH_PORT:-28480}
mock_port=$base

port_free "$mock_port"
taskset -c "$CLIENT_CPU" "$MOCK" --listen "127.0.0.1:$mock_port" --tls-cert-file "$bench_tmp/cert.pem" \
    --tls-private-key-file "$bench_tmp/key.pem" --behavior hang 2>"$bench_tmp/mock.log" &
bench_pids+=($!)
wait_port "$mock_port"

cat > "$bench_tmp/dead.yaml" <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: dead}
webhooks:
- name: dead.breaker-bench.example
  clientConfig: {url: "https://127.0.0.1:$mock_port/v", caBundle: "$ca_b64"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 1
  failurePolicy: Ignore
YAML

declare -A url
port=$((base + 1))
for c in plain breaker; do
    extra=()
    [ $c = breaker ] && extra=(--webhook-circuit-breaker 5/10s)
    port_free "$port"
    taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --webhook-config "$bench_tmp/dead.yaml" "${extra[@]}" \
        2>"$bench_tmp/admitd-$c.log" &
    bench_pids+=($!)
    wait_port "$port"
    url[$c]="https://127.0.0.1:$port/validate"
    port=$((port + 1))
done

# run_bench URL -> "p50_us p99_us not_allowed"
run_bench() {
    taskset -c "$CLIENT_CPU" "$BENCH" --url "$1" --cacert "$bench_tmp/cert.pem" --review "$review" \
        --rate "$rate" --connections 512 --warmup 3s --duration "${secs}s" --timeout 10s \
        --json "$bench_tmp/run.json" > "$bench_tmp/run.txt" 2>&1 ||
        { cat "$bench_tmp/run.txt" >&2; tail -n 3 "$bench_tmp"/admitd-*.log >&2; return 1; }
    tr -d '\n ' < "$bench_tmp/run.json" | sed -E 's/.*"requests":\{"sent":([0-9]+).*"allowed":([0-9]+).*"latency_ns":\{[^}]*"p50":([0-9]+),"p90":[0-9]+,"p99":([0-9]+).*/\3 \4 \1 \2/' |
        awk '{printf "%.1f %.1f %d\n", $1/1000, $2/1000, $3-$4}'
}

echo "admitd $("$ADMITD" --version | cut -d' ' -f2); dead webhook (hang), timeoutSeconds 1, Ignore; $rate req/s for ${secs}s"
echo "round  contender  p50_us  p99_us  not_allowed"
for r in $(seq 1 "$rounds"); do
    for c in plain breaker; do
        read -r p50 p99 bad < <(run_bench "${url[$c]}")
        echo "$r      $c  $p50  $p99  $bad"
        echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"
    done
done
for c in plain breaker; do
    echo "median $c: p50 $(median < "$bench_tmp/$c.p50") us, p99 $(median < "$bench_tmp/$c.p99") us"
done
awk -v a="$(median < "$bench_tmp/plain.p50")" -v b="$(median < "$bench_tmp/breaker.p50")" \
    'BEGIN { printf "p50 plain/breaker: %.0fx\n", a / b }'
