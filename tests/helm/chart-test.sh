#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The helm chart in CI, without helm (which no registry these machines reach carries): builds
# tests/helm/render (text/template + Masterminds sprig from Debian, offline from /usr/share/gocode),
# renders helm/admitd with the defaults, each TLS mode, everything turned on, and values it must
# refuse, and checks the objects (render -selftest). Then, for each rendered scenario, admitd itself
# must accept what the pod would run: the container's args are flags admitd knows, and admitd
# started with those args (listeners moved to 127.0.0.1:0, mounted files from the rendering) plus
# the chart's own webhook configurations in --webhook-config loads everything, turns ready, serves
# /metrics, and exits 0 on SIGTERM. A scenario that renders --in-cluster (clusterState.inCluster)
# runs against adm-fake-apiserver over TLS, with the service account's folder as kubelet mounts it.
#
#   tests/helm/chart-test.sh ADMITD_BIN WORK_DIR FAKE_APISERVER_BIN
set -euo pipefail
admitd=$1
work=$2
fake_api=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/Masterminds/sprig ]; then
    echo "chart-test: needs golang-go and golang-github-masterminds-sprig-dev (third_party/deps.sh installs them)"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
mkdir -p "$work"
GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$work/gocache" \
    go build -o "$work/render" "$root"/tests/helm/render/*.go
rm -rf "$work/out"
"$work/render" -chart "$root/helm/admitd" -selftest "$work/out"

fail() { echo "chart-test: $*" >&2; exit 1; }
pid=
api_pid=
# whatever fails, no admitd or API server started here outlives the test
cleanup() {
    set +e
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null
    return 0
}
trap cleanup EXIT

# The port admitd logged for a listener kind ("serving health on 127.0.0.1:PORT").
port_of() { grep -o "serving $1 on 127.0.0.1:[0-9]*" "$2" | head -1 | sed 's/.*://'; }

# The API server of the in-cluster scenarios: a throwaway CA and a certificate for 127.0.0.1, one
# bearer token; admitd finds it through KUBERNETES_SERVICE_HOST/PORT and reads the token, CA and
# namespace from ADM_SERVICEACCOUNT_DIR (the pod's /var/run/secrets/kubernetes.io/serviceaccount).
start_api() {
    local pki="$work/api-pki" sa="$work/serviceaccount" log="$work/api.log"
    rm -rf "$pki" "$sa"
    mkdir -p "$pki" "$sa"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=chart-test-ca \
        -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
        -keyout "$pki/api.key" -out "$pki/api.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$pki/ext"
    openssl x509 -req -in "$pki/api.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
        -extfile "$pki/ext" -out "$pki/api.crt" 2>/dev/null
    cp "$pki/ca.crt" "$sa/ca.crt"
    echo chart-test-token >"$sa/token"
    echo admitd-system >"$sa/namespace"
    "$fake_api" --listen 127.0.0.1:0 --token chart-test-token --tls-cert-file "$pki/api.crt" \
        --tls-private-key-file "$pki/api.key" >"$log" 2>&1 &
    api_pid=$!
    for _ in $(seq 100); do
        grep -q 'serving admission on 127.0.0.1:' "$log" && break
        kill -0 "$api_pid" 2>/dev/null || { cat "$log" >&2; fail "adm-fake-apiserver exited at start"; }
        sleep 0.1
    done
    api_port=$(port_of admission "$log")
    [ -n "$api_port" ] || { cat "$log" >&2; fail "adm-fake-apiserver did not say its port"; }
    export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$api_port" ADM_SERVICEACCOUNT_DIR="$sa"
}

for dir in "$work"/out/*/; do
    scenario=$(basename "$dir")
    mapfile -t args < <(sed -e "s#/etc/admitd/#${dir}etc/admitd/#" \
        -e 's#^--\(listen\|health-listen\|metrics-listen\)=.*#--\1=127.0.0.1:0#' "$dir/args")
    run_args=("${args[@]}")
    "$admitd" "${run_args[@]}" --help >/dev/null || fail "$scenario: admitd refuses the rendered flags: ${run_args[*]}"
    if [[ " ${run_args[*]} " == *" --in-cluster "* ]] && [ -z "$api_pid" ]; then start_api; fi

    log="$dir/admitd.log"
    "$admitd" "${run_args[@]}" --webhook-config "$dir/registration.yaml" --shutdown-delay 0s >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do
        grep -q 'admitd [0-9.]* ready' "$log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$scenario: admitd exited at start"; }
        sleep 0.1
    done
    grep -q 'admitd [0-9.]* ready' "$log" || { cat "$log" >&2; kill "$pid"; fail "$scenario: admitd not ready in 20 s"; }
    health=$(port_of health "$log")
    metrics=$(port_of metrics "$log")
    # in-cluster, /readyz waits for the informers' first LISTs, which the "ready" line does not
    for _ in $(seq 200); do
        [ "$(curl -s "http://127.0.0.1:$health/readyz")" = ok ] && break
        sleep 0.1
    done
    [ "$(curl -s "http://127.0.0.1:$health/readyz")" = ok ] || fail "$scenario: /readyz on the probes' port is not ok in 20 s"
    # read whole before grep: under pipefail, grep -q leaving early fails curl with SIGPIPE
    scrape=$(curl -s "http://127.0.0.1:$metrics/metrics")
    grep -q '^admitd_config_reloads_total' <<<"$scrape" \
        || fail "$scenario: /metrics on the metrics port lacks the admission families"
    hooks=$(grep -c '"kind"\|kind: \(Mutating\|Validating\)WebhookConfiguration' "$dir/registration.yaml" || true)
    kill -TERM "$pid"
    wait "$pid" || { cat "$log" >&2; pid=; fail "$scenario: admitd did not exit 0 on SIGTERM"; }
    pid=
    in_cluster=
    [[ " ${run_args[*]} " == *" --in-cluster "* ]] && in_cluster=", in-cluster against the fake API server"
    echo "chart-test: $scenario: admitd took the rendered flags, files and $hooks webhook configurations$in_cluster, was ready, exited 0"
done
echo "chart-test: ok"
