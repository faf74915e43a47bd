#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Admission chain benchmark: what running the compiled-in plugins costs. One admitd with its default
# plugin set (over tests/fixtures/cluster-state.yaml, which holds the service account the pod names)
# serves both paths; wrk (one thread, 32 connections, TLS keep-alive) alternates round by round between
#   validate  POST /validate: decode + the validating phase
#   admit     POST /admit: decode + both phases; DefaultTolerationSeconds adds two tolerations, so
#             the object is copied, mutated, diffed, and the answer carries a base64 JSON Patch
# on bench/reviews/pod-create-untolerated.v1.json (a 4 KB pod CREATE without tolerations), and
#   admit-unchanged  POST /admit of tests/fixtures/pod-create.v1.review.json, the same pod with the
#             tolerations already there: both phases run, nothing changes, no patch.
# and, on two more admitd processes (one running at a time is measured; each round alternates all),
#   bare-validate  POST /validate on an admitd with every plugin disabled: decode + encode, the floor
#   full-admit     POST /admit on an admitd with kube's whole default set over bench/cluster/full.yaml
#             (PodSecurity baseline, ServiceAccount, LimitRange, ResourceQuota, PriorityClass): every
#             stateful plugin does its work on the realistic pod, which is admitted with a patch
# The issue's figure is full-admit / bare-validate (aim: >= 0.80, the default set costing < 20%).
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
port=18445 full_port=18446 bare_port=18447
defaults=$("$ADMITD" --list-plugins | awk '$(NF-1) == "on" {print $1}' | paste -sd, -)
start() { # PORT LOG [FLAGS...]
    local p=$1 log=$2
    shift 2
    taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$p" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" "$@" 2>"$bench_tmp/$log" &
    bench_pids+=($!)
    wait_port "$p"
}
start "$port" admitd.log --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml"
pid=${bench_pids[-1]}
start "$full_port" full.log --cluster-state "$bench_root/bench/cluster/full.yaml"
full_pid=${bench_pids[-1]}
start "$bare_port" bare.log --disable-admission-plugins "$defaults"
bare_pid=${bench_pids[-1]}
hz=$(getconf CLK_TCK)
answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
         --data-binary @"$review" "https://127.0.0.1:$full_port/admit")
case "$answer" in
*'"allowed":true'*'"patchType":"JSONPatch"'*) echo "full /admit answer: ${#answer} B" ;;
*) echo "unexpected full /admit answer: $answer" >&2; exit 1 ;;
esac

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
# req/s is what wrk got on this shared machine; req/cpu_s (requests per CPU-second of the server,
# from /proc) does not count the time other load took from the server's core
echo "round  contender  req/s  p50_ms  p99_ms  req/cpu_s"
for r in $(seq 1 "$rounds"); do
    for c in validate admit admit-unchanged bare-validate full-admit; do
        path=${c%-unchanged}; path=${path#*-}; body=$review; p=$port
        [ "$c" = admit-unchanged ] && body=$unchanged
        sp=$pid
        [ "$c" = bare-validate ] && p=$bare_port && sp=$bare_pid
        [ "$c" = full-admit ] && p=$full_port && sp=$full_pid
        t0=$(cpu_ticks "$sp")
        read -r rps p50 p99 < <(run_wrk "https://127.0.0.1:$p/$path" "$body")
        cps=$(awk -v r="$rps" -v s="$secs" -v t="$(($(cpu_ticks "$sp") - t0))" -v hz="$hz" \
              'BEGIN {printf "%.0f", (t > 0 ? r * s * hz / t : 0)}')
        echo "$r      $c  $rps  $p50  $p99  $cps"
        echo "$rps" >> "$bench_tmp/$c.rps"; echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"
        echo "$cps" >> "$bench_tmp/$c.cps"
    done
done
v=$(median < "$bench_tmp/validate.rps")
for c in validate admit admit-unchanged bare-validate full-admit; do
    m=$(median < "$bench_tmp/$c.rps")
    echo "median $c: $m req/s (p50 $(median < "$bench_tmp/$c.p50") ms, p99 $(median < "$bench_tmp/$c.p99") ms)," \
         "$(awk -v a="$m" -v v="$v" 'BEGIN {printf "%.2fx", a/v}') of validate; $(median < "$bench_tmp/$c.cps") req/cpu_s"
done
b=$(median < "$bench_tmp/bare-validate.rps"); f=$(median < "$bench_tmp/full-admit.rps")
bc=$(median < "$bench_tmp/bare-validate.cps"); fc=$(median < "$bench_tmp/full-admit.cps")
echo "full-admit / bare-validate: $(awk -v f="$f" -v b="$b" 'BEGIN {printf "%.2fx", f/b}') by req/s," \
     "$(awk -v f="$fc" -v b="$bc" 'BEGIN {printf "%.2fx", f/b}') by req/cpu_s (aim >= 0.80x)"
echo "in-process cost, pinned to core $SERVER_CPU:"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$review"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$unchanged"
echo "full default set over bench/cluster/full.yaml, then every plugin disabled:"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$review" - 20000 "$bench_root/bench/cluster/full.yaml" -
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$review" - 20000 - "$defaults"
echo "what the chain's per-hook timing costs (20 hooks run on the realistic pod with the default set):"
taskset -c "$SERVER_CPU" "$bench_root/build-bench/bench/chain-cost" "$review" - 1000000 - - clock
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
