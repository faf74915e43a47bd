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
# /metrics, and exits 0 on SIGTERM.
#
#   tests/helm/chart-test.sh ADMITD_BIN WORK_DIR
set -euo pipefail
admitd=$1
work=$2
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
# whatever fails, no admitd started here outlives the test
cleanup() {
    set +e
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    return 0
}
trap cleanup EXIT

# The port admitd logged for a listener kind ("serving health on 127.0.0.1:PORT").
port_of() { grep -o "serving $1 on 127.0.0.1:[0-9]*" "$2" | head -1 | sed 's/.*://'; }

for dir in "$work"/out/*/; do
    scenario=$(basename "$dir")
    mapfile -t args < <(sed -e "s#/etc/admitd/#${dir}etc/admitd/#" \
        -e 's#^--\(listen\|health-listen\|metrics-listen\)=.*#--\1=127.0.0.1:0#' "$dir/args")
    run_args=()
    for a in "${args[@]}"; do
        # a flag whose feature another change brings: rendered only when its value is turned on
        if [ "$a" = --in-cluster ] && ! "$admitd" --help | grep -q -- '--in-cluster'; then
            echo "chart-test: $scenario: --in-cluster rendered (clusterState.inCluster=true); admitd has no such flag yet, left out"
            continue
        fi
        run_args+=("$a")
    done
    "$admitd" "${run_args[@]}" --help >/dev/null || fail "$scenario: admitd refuses the rendered flags: ${run_args[*]}"
    [[ " ${run_args[*]} " == *" --in-cluster "* ]] && { echo "chart-test: $scenario: flags accepted (not started: --in-cluster needs an API server)"; continue; }

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
    [ "$(curl -s "http://127.0.0.1:$health/readyz")" = ok ] || fail "$scenario: /readyz on the probes' port is not ok"
    curl -s "http://127.0.0.1:$metrics/metrics" | grep -q '^admitd_config_reloads_total' \
        || fail "$scenario: /metrics on the metrics port lacks the admission families"
    hooks=$(grep -c '"kind"\|kind: \(Mutating\|Validating\)WebhookConfiguration' "$dir/registration.yaml" || true)
    kill -TERM "$pid"
    wait "$pid" || { cat "$log" >&2; pid=; fail "$scenario: admitd did not exit 0 on SIGTERM"; }
    pid=
    echo "chart-test: $scenario: admitd took the rendered flags, files and $hooks webhook configurations, was ready, exited 0"
done
echo "chart-test: ok"
