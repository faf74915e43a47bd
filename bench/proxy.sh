#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Webhook proxy overhead: what admitd adds to the latency of the downstream webhooks it calls.
# admitd-bench (open loop at RATE req/s, 64 connections, TLS keep-alive, 4 KB pod review) drives,
# round by round alternating:
#   direct   admitd-bench straight at one admitd-mockhook (TLS, allow after a fixed 5 ms): the
#            upstream's own latency at this rate
#   v1       admitd /validate with 1 validating webhook on that kind of mockhook
#   v5       admitd /validate with 5 validating webhooks, 5 mockhooks, called in parallel
#   m3       admitd /mutate with a chain of 3 mutating webhooks (3 mockhooks, each adds a label)
# admitd (Release, one worker) is pinned to core 0; admitd-bench and the mockhooks to core 1.
# Overhead = admitd's latency minus the upstreams': for v1 and v5 the direct latency at the same
# quantile (every upstream answers after the same fixed delay, so the slowest is no slower than
# one; at p99 that slightly favours admitd's baseline, i.e. overstates the overhead); for m3,
# which calls one after another, three direct p50s at p50 and one direct p99 plus two p50s at p99.
# Medians over the rounds; the aim is an overhead p99 under 300 us.
#
#   bench/proxy.sh [ROUNDS=3] [SECONDS=10] [RATE=2000]
#   PROXY_DELAY=0ms bench/proxy.sh ...   upstreams answer at once: the overhead is then not hidden
#                                        in the jitter of their millisecond timers
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-2000}
delay=${PROXY_DELAY:-5ms}
review="$bench_root/bench/reviews/pod-4k.v1.json"

bench_build
BENCH="$bench_root/build-bench/bench/admitd-bench"
MOCK="$bench_root/build-bench/bench/admitd-mockhook"
bench_cert
ca_b64=$(base64 -w0 "$bench_tmp/cert.pem")

# ports BASE..BASE+7 for the mockhooks (all with the same certificate, on the client core),
# BASE+10, +11, +12 for the three admitd (PROXY_BENCH_PORT, default 28450)
base=${PROXY_BENCH_PORT:-28450}
port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then echo "port $1 is in use" >&2; return 1; fi
}
mock_port=$base
start_mock() { # PORT [ARGS...]
    local port=$1
    shift
    port_free "$port"
    taskset -c "$CLIENT_CPU" "$MOCK" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --delay "$delay" "$@" 2>"$bench_tmp/mock-$port.log" &
    bench_pids+=($!)
    wait_port "$port"
}
for i in 0 1 2 3 4; do start_mock $((mock_port + i)) --behavior allow; done
for i in 0 1 2; do
    start_mock $((mock_port + 5 + i)) --behavior "patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/proxy-bench-$i\",\"value\":\"x\"}]"
done

hook() { # NAME PORT PATH
    cat <<EOF
- name: $1
  clientConfig: {url: "https://127.0.0.1:$2$3", caBundle: "$ca_b64"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
  failurePolicy: Fail
EOF
}
config_head() { # KIND NAME
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: %s\nmetadata: {name: %s}\nwebhooks:\n' "$1" "$2"
}
{ config_head ValidatingWebhookConfiguration v1; hook v0.proxy-bench.example $mock_port /v; } > "$bench_tmp/v1.yaml"
{ config_head ValidatingWebhookConfiguration v5
  for i in 0 1 2 3 4; do hook "v$i.proxy-bench.example" $((mock_port + i)) /v; done; } > "$bench_tmp/v5.yaml"
{ config_head MutatingWebhookConfiguration m3
  for i in 0 1 2; do hook "m$i.proxy-bench.example" $((mock_port + 5 + i)) /m; done; } > "$bench_tmp/m3.yaml"

declare -A url
url[direct]="https://127.0.0.1:$mock_port/v"
port=$((base + 10))
for c in v1 v5 m3; do
    port_free "$port"
    taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --webhook-config "$bench_tmp/$c.yaml" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>"$bench_tmp/admitd-$c.log" &
    bench_pids+=($!)
    wait_port "$port"
    path=validate; [ $c = m3 ] && path=mutate
    url[$c]="https://127.0.0.1:$port/$path"
    port=$((port + 1))
done

# one request through each, checked by hand-written expectations
for c in direct v1 v5 m3; do
    answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
             --data-binary @"$review" "${url[$c]}")
    case "$c:$answer" in
    m3:*'"allowed":true'*'"patch":'*) ;;
    m3:*) echo "unexpected $c answer: $answer" >&2; exit 1 ;;
    *:*'"allowed":true'*) ;;
    *) echo "unexpected $c answer: $answer" >&2; exit 1 ;;
    esac
done

# run_bench URL -> "p50_us p99_us errors": admitd-bench on the client core, open loop at $rate.
run_bench() {
    taskset -c "$CLIENT_CPU" "$BENCH" --url "$1" --cacert "$bench_tmp/cert.pem" --review "$review" \
        --rate "$rate" --connections 64 --warmup 2s --duration "${secs}s" --timeout 10s \
        --json "$bench_tmp/run.json" > "$bench_tmp/run.txt" 2>&1 || { cat "$bench_tmp/run.txt" >&2; return 1; }
    tr -d '\n ' < "$bench_tmp/run.json" | sed -E 's/.*"requests":\{"sent":([0-9]+).*"allowed":([0-9]+).*"latency_ns":\{[^}]*"p50":([0-9]+),"p90":[0-9]+,"p99":([0-9]+).*/\3 \4 \1 \2/' |
        awk '{printf "%.1f %.1f %d\n", $1/1000, $2/1000, $3-$4}'
}

echo "admitd $("$ADMITD" --version | cut -d' ' -f2); body $(wc -c < "$review") B; $rate req/s; upstream delay $delay"
echo "round  contender  p50_us  p99_us  not_allowed"
for r in $(seq 1 "$rounds"); do
    for c in direct v1 v5 m3; do
        read -r p50 p99 bad < <(run_bench "${url[$c]}")
        echo "$r      $c  $p50  $p99  $bad"
        echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"
    done
done
d50=$(median < "$bench_tmp/direct.p50"); d99=$(median < "$bench_tmp/direct.p99")
echo "median direct (upstream alone): p50 $d50 us, p99 $d99 us"
for c in v1 v5 m3; do
    a50=$(median < "$bench_tmp/$c.p50"); a99=$(median < "$bench_tmp/$c.p99")
    awk -v c="$c" -v a50="$a50" -v a99="$a99" -v d50="$d50" -v d99="$d99" 'BEGIN {
        b50 = d50; b99 = d99
        if (c == "m3") { b50 = 3 * d50; b99 = d99 + 2 * d50 }
        printf "median %s: p50 %.1f us, p99 %.1f us; overhead p50 %.1f us, p99 %.1f us (aim p99 < 300 us: %s)\n",
               c, a50, a99, a50 - b50, a99 - b99, (a99 - b99 < 300) ? "met" : "not met" }'
done
