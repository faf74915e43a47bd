#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Endpoint spreading against a connection-sticky pool (issue 18): three admitd-mockhooks of unequal
# speed (answers after 2 ms, 2 ms and SLOW, default 20 ms) behind one webhook, and two admitd:
#   spread   --resolve localhost:PORT:127.0.0.1,127.0.0.2,127.0.0.3: one pool per address, each
#            call to the address with the fewest calls outstanding (admitd's spreading)
#   sticky   one address, a TCP balancer that picks a mockhook at random per connection and keeps
#            the connection there: what kube-proxy gives a keep-alive client of a Service
#            (kubernetes#127335)
# Both reach the mockhooks through one user-space hop of bench/tools/tcp_balancer.py (one
# pass-through per address for spread, the random balancer for sticky), so the hop costs the same.
# admitd-bench drives each admitd in open loop at RATE req/s over TLS keep-alive (4 KB pod review),
# round by round alternating; each round reports p50/p99 and the share of calls each mockhook got.
# admitd is pinned to core 0; the rest to core 1.
#
#   bench/spread.sh [ROUNDS=3] [SECONDS=8] [RATE=200]     SLOW=20ms
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-8}
rate=${3:-200}
slow=${SLOW:-20ms}
review="$bench_root/bench/reviews/pod-4k.v1.json"
balancer="$bench_root/bench/tools/tcp_balancer.py"

bench_build
BENCH="$bench_root/build-bench/bench/admitd-bench"
MOCK="$bench_root/build-bench/bench/admitd-mockhook"
bench_cert
ca_b64=$(base64 -w0 "$bench_tmp/cert.pem")
base=${SPREAD_BENCH_PORT:-28520}
hop=$((base + 5))    # the pass-throughs listen on 127.0.0.{1,2,3}:hop
sticky=$((base + 6)) # the random balancer
delays=(2ms 2ms "$slow")

backends=()
for i in 0 1 2; do
    port_free $((base + i))
    taskset -c "$CLIENT_CPU" "$MOCK" --listen "127.0.0.1:$((base + i))" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --delay "${delays[$i]}" --record "$bench_tmp/rec-$i.jsonl" \
        2>"$bench_tmp/mock-$i.log" &
    bench_pids+=($!)
    wait_port $((base + i))
    backends+=("127.0.0.1:$((base + i))")
    taskset -c "$CLIENT_CPU" python3 "$balancer" "127.0.0.$((i + 1)):$hop" "127.0.0.1:$((base + i))" &
    bench_pids+=($!)
done
port_free "$sticky"
taskset -c "$CLIENT_CPU" python3 "$balancer" "127.0.0.1:$sticky" "${backends[@]}" &
bench_pids+=($!)
wait_port "$hop"
wait_port "$sticky"

config() { # PORT
    cat <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: spread}
webhooks:
- name: spread.spread-bench.example
  clientConfig: {url: "https://localhost:$1/v", caBundle: "$ca_b64"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
  failurePolicy: Fail
YAML
}
config "$hop" > "$bench_tmp/spread.yaml"
config "$sticky" > "$bench_tmp/sticky.yaml"

declare -A url
port=$((base + 10))
for c in spread sticky; do
    extra=()
    [ $c = spread ] && extra=(--resolve "localhost:$hop:127.0.0.1,127.0.0.2,127.0.0.3")
    port_free "$port"
    taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --webhook-config "$bench_tmp/$c.yaml" "${extra[@]}" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>"$bench_tmp/admitd-$c.log" &
    bench_pids+=($!)
    wait_port "$port"
    url[$c]="https://127.0.0.1:$port/validate"
    port=$((port + 1))
done

share() { # -> "a% b% c%" of the calls since the counts in $1 $2 $3
    local n0 n1 n2
    n0=$(($(wc -l < "$bench_tmp/rec-0.jsonl") - $1)); n1=$(($(wc -l < "$bench_tmp/rec-1.jsonl") - $2))
    n2=$(($(wc -l < "$bench_tmp/rec-2.jsonl") - $3))
    awk -v a="$n0" -v b="$n1" -v c="$n2" 'BEGIN {t = a + b + c; if (t == 0) t = 1
        printf "%.1f%% %.1f%% %.1f%%", 100 * a / t, 100 * b / t, 100 * c / t}'
}
# run_bench URL -> "p50_us p99_us not_allowed"
run_bench() {
    quiet_wait
    taskset -c "$CLIENT_CPU" "$BENCH" --url "$1" --cacert "$bench_tmp/cert.pem" --review "$review" \
        --rate "$rate" --connections 64 --warmup 2s --duration "${secs}s" --timeout 10s \
        --json "$bench_tmp/run.json" > "$bench_tmp/run.txt" 2>&1 || { cat "$bench_tmp/run.txt" >&2; return 1; }
    tr -d '\n ' < "$bench_tmp/run.json" | sed -E 's/.*"requests":\{"sent":([0-9]+).*"allowed":([0-9]+).*"latency_ns":\{[^}]*"p50":([0-9]+),"p90":[0-9]+,"p99":([0-9]+).*/\3 \4 \1 \2/' |
        awk '{printf "%.1f %.1f %d\n", $1/1000, $2/1000, $3-$4}'
}

touch "$bench_tmp"/rec-{0,1,2}.jsonl
echo "admitd $("$ADMITD" --version | cut -d' ' -f2); upstreams 2ms, 2ms, $slow; $rate req/s for ${secs}s; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round  contender  p50_us  p99_us  not_allowed  share(2ms 2ms $slow)"
for r in $(seq 1 "$rounds"); do
    for c in spread sticky; do
        read -r b0 b1 b2 < <(for i in 0 1 2; do wc -l < "$bench_tmp/rec-$i.jsonl"; done | paste -sd' ')
        read -r p50 p99 bad < <(run_bench "${url[$c]}")
        echo "$r      $c  $p50  $p99  $bad  $(share "$b0" "$b1" "$b2")"
        echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"
    done
done
for c in spread sticky; do
    echo "median $c: p50 $(median < "$bench_tmp/$c.p50") us, p99 $(median < "$bench_tmp/$c.p99") us"
done
awk -v a="$(median < "$bench_tmp/sticky.p99")" -v b="$(median < "$bench_tmp/spread.p99")" \
    -v c="$(median < "$bench_tmp/sticky.p50")" -v d="$(median < "$bench_tmp/spread.p50")" \
    'BEGIN { printf "sticky/spread: p50 %.2fx, p99 %.2fx\n", c / d, a / b }'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
