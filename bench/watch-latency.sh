#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Watch event to admission: how long after a change on the API server a request admitd answers
# sees it (issue 13). Starts adm-fake-apiserver (tests/apiserver) and one admitd --insecure-http
# --kubeconfig against it (the default plugin set, so every kind the plugins read is watched), each
# on its own core, then bench/tools/watch-latency flips the namespace label
# pod-security.kubernetes.io/enforce between restricted and privileged CHANGES times and polls
# /validate after each until PodSecurity's answer follows. Prints p50/p99/max per round and the
# medians over the rounds.
#
#   bench/watch-latency.sh [ROUNDS=3] [CHANGES=200]
#   WATCH_BUILD=DIR: use the admitd, adm-fake-apiserver and watch-latency already built in DIR
#   (e.g. build-test) instead of building a Release tree
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
changes=${2:-200}
api_port=18490
admitd_port=18491
health_port=18492

# the fake API server is a test target: a Release tree of its own with the tests configured
if [ -n "${WATCH_BUILD:-}" ]; then
    build=$(cd "$WATCH_BUILD" && pwd)
else
    "$bench_root/third_party/deps.sh" >/dev/null
    build="$bench_root/build-bench-tests"
    cmake -S "$bench_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" --target admitd adm-fake-apiserver watch-latency >/dev/null
fi

port_free "$api_port"
taskset -c "$CLIENT_CPU" "$build/tests/adm-fake-apiserver" --listen "127.0.0.1:$api_port" --token bench \
    --namespaces 1000 2>"$bench_tmp/fake.log" &
bench_pids+=($!)
wait_port "$api_port"
for obj in '"namespaces","object":{"metadata":{"name":"bench"},"status":{"phase":"Active"}}' \
           '"serviceaccounts","object":{"metadata":{"name":"default","namespace":"bench"}}'; do
    curl -sS -o /dev/null --fail -H 'Content-Type: application/json' \
         --data "{\"op\":\"put\",\"resource\":$obj}" "http://127.0.0.1:$api_port/_control"
done
cat > "$bench_tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: bench
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$api_port"}}]
users: [{name: bench, user: {token: bench}}]
contexts: [{name: bench, context: {cluster: fake, user: bench}}]
YAML
port_free "$admitd_port"
taskset -c "$SERVER_CPU" "$build/admitd" --listen "127.0.0.1:$admitd_port" --insecure-http \
    --health-listen "127.0.0.1:$health_port" --shutdown-delay 0s --kubeconfig "$bench_tmp/kubeconfig" \
    2>"$bench_tmp/admitd.log" &
bench_pids+=($!)
wait_port "$admitd_port"
for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$health_port/readyz")" = 200 ] && break
    sleep 0.05
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$health_port/readyz")" = 200 ] ||
    { echo "admitd never synced:" >&2; cat "$bench_tmp/admitd.log" >&2; exit 1; }

echo "admitd $("$build/admitd" --version | cut -d' ' -f2), $(grep -c 'synced,' "$bench_tmp/admitd.log") kinds watched," \
     "1001 namespaces; $rounds rounds of $changes label changes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round  p50_ms  p99_ms  max_ms  requests/change"
for r in $(seq 1 "$rounds"); do
    out=$(taskset -c "$CLIENT_CPU" "$build/bench/watch-latency" "$api_port" "$admitd_port" "$changes")
    read -r p50 p99 max < <(echo "$out" | awk '/^watch_event_to_admission_ms/ {print $3, $5, $7}')
    per=$(echo "$out" | awk '/^requests_per_change/ {print $2}')
    printf '%-6s %6.3f  %6.3f  %6.3f  %s\n' "$r" "$p50" "$p99" "$max" "$per"
    echo "$p50" >> "$bench_tmp/p50"; echo "$p99" >> "$bench_tmp/p99"
done
echo "median over rounds: p50 $(median < "$bench_tmp/p50") ms, p99 $(median < "$bench_tmp/p99") ms"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
