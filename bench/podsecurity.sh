#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# PodSecurity benchmark: the restricted level on the realistic pod (bench/reviews/pod-4k.v1.json, a
# 4 KB Deployment pod that meets restricted, so every check runs and it is admitted). admit-bench
# --closed, 32 connections, TLS keep-alive, rounds alternating between
#   psa-restricted  admitd /validate, namespace "shop" labelled enforce, audit and warn restricted
#   no-plugin       admitd /validate with --disable-admission-plugins PodSecurity (nothing applies
#                   to a pod: decode, empty validating phase, encode)
#   go-webhook      bench/peers/go-webhook /validate: parse and answer, no policy (kube's own
#                   pod-security webhook cannot be built here: its Go modules cannot be downloaded)
# Medians and the psa-restricted/no-plugin and psa-restricted/go-webhook ratios are printed.
#
#   bench/podsecurity.sh [ROUNDS=3] [SECONDS=10]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
review="$bench_root/bench/reviews/pod-4k.v1.json"
export BENCH_REVIEW="$review"

bench_build
bench_tools
bench_cert
psa_port=18480
plain_port=18481
go_port=18482
cat > "$bench_tmp/restricted.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/audit: restricted
    pod-security.kubernetes.io/warn: restricted
YAML

# started by hand: start_admitd adds tests/fixtures/cluster-state.yaml, whose "shop" has no labels
port_free "$psa_port"
taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$psa_port" --tls-cert-file "$bench_tmp/cert.pem" \
    --tls-private-key-file "$bench_tmp/key.pem" --shutdown-delay 0s --cluster-state "$bench_tmp/restricted.yaml" \
    2>"$bench_tmp/admitd-psa.log" &
bench_pids+=($!)
wait_port "$psa_port"
start_admitd "$plain_port" tls --disable-admission-plugins PodSecurity
start_go_webhook "$go_port"
for port in "$psa_port" "$plain_port" "$go_port"; do
    answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' --data-binary @"$review" \
             "https://127.0.0.1:$port/validate")
    case "$answer" in *'"allowed":true'*) ;; *) echo "unexpected answer on $port: $answer" >&2; exit 1 ;; esac
done
case "$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' --data-binary @"$review" \
        "https://127.0.0.1:$psa_port/validate")" in
    *'enforce-policy":"restricted:latest'*) ;;
    *) echo "PodSecurity did not evaluate restricted" >&2; exit 1 ;;
esac

declare -A url=(
    [psa-restricted]="https://127.0.0.1:$psa_port/validate"
    [no-plugin]="https://127.0.0.1:$plain_port/validate"
    [go-webhook]="https://127.0.0.1:$go_port/validate"
)
targets=(psa-restricted no-plugin go-webhook)

echo "admitd $("$ADMITD" --version | cut -d' ' -f2), $(head -1 "$bench_tmp/go-webhook.log" | sed 's/.*(\(.*\))/\1/');" \
     "review $(basename "$review") ($(wc -c < "$review") B); ${rounds} rounds of ${secs} s"
echo "round  target           req/s   p50_ms  p99_ms  client_cpu%"
for r in $(seq 1 "$rounds"); do
    for t in "${targets[@]}"; do
        read -r rps p50 p99 cpu ok err < <(run_bench "${url[$t]}" "$review")
        [ "$err" -gt 0 ] && { echo "admitd-bench errors against $t:" >&2; cat "$bench_tmp/bench.out" >&2; }
        printf '%-6s %-16s %8.0f  %6.3f  %6.3f  %5s\n' "$r" "$t" "$rps" "$p50" "$p99" "$cpu"
        echo "$rps" >> "$bench_tmp/$t.rps"; echo "$p50" >> "$bench_tmp/$t.p50"
    done
    awk -v a="$(tail -1 "$bench_tmp/psa-restricted.rps")" -v b="$(tail -1 "$bench_tmp/no-plugin.rps")" \
        'BEGIN {print a / b}' >> "$bench_tmp/plugin-ratio"
    awk -v a="$(tail -1 "$bench_tmp/psa-restricted.rps")" -v b="$(tail -1 "$bench_tmp/go-webhook.rps")" \
        'BEGIN {print a / b}' >> "$bench_tmp/go-ratio"
done
echo
echo "medians          req/s     p50_ms"
for t in "${targets[@]}"; do
    printf '%-16s %8.0f  %6.3f\n' "$t" "$(median < "$bench_tmp/$t.rps")" "$(median < "$bench_tmp/$t.p50")"
done
echo "psa-restricted / no-plugin: $(median < "$bench_tmp/plugin-ratio")x (median of per-round ratios)"
echo "psa-restricted / go-webhook: $(median < "$bench_tmp/go-ratio")x (median of per-round ratios)"
