#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# What the stateful plugins cost in process (bench/tools/chain-cost.c: no sockets, no TLS), on
# bench/reviews/pod-create-untolerated.v1.json (a 4 KB pod CREATE in namespace default):
#   none      /validate with every default plugin disabled: decode + encode, the floor
#   default   /admit with kube's default set over the built-in cluster state (no LimitRange)
#   stateful  /admit with the default set over bench/cluster/limitrange.yaml: LimitRanger defaults
#             the init container and checks every container and the pod total
# Rounds alternate the three; medians and ratios to "none" are printed.
#
#   bench/stateful.sh [ROUNDS=5] [ITERATIONS=20000]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-5}
iters=${2:-20000}
review="$bench_root/bench/reviews/pod-create-untolerated.v1.json"
state="$bench_root/bench/cluster/limitrange.yaml"

bench_build
cost="$bench_root/build-bench/bench/chain-cost"
defaults=$("$ADMITD" --list-plugins | awk '$(NF-1) == "on" && $NF == "yes" {print $1}' | paste -sd, -)
echo "default set: $defaults"
us() { # field N of chain-cost's line: 1 decode, 2 /validate, 3 /admit
    taskset -c "$SERVER_CPU" "$cost" "$review" - "$iters" "$2" "$3" |
        sed -E 's/.*decode ([0-9.]+) us, \/validate ([0-9.]+) us, \/admit ([0-9.]+) us.*/\1 \2 \3/' |
        awk -v f="$1" '{print $f}'
}
echo "round  none_us  default_us  stateful_us"
for r in $(seq 1 "$rounds"); do
    n=$(us 2 - "$defaults"); d=$(us 3 - -); s=$(us 3 "$state" -)
    echo "$r      $n  $d  $s"
    echo "$n" >> "$bench_tmp/none"; echo "$d" >> "$bench_tmp/default"; echo "$s" >> "$bench_tmp/stateful"
done
n=$(median < "$bench_tmp/none")
for c in none default stateful; do
    m=$(median < "$bench_tmp/$c")
    echo "median $c: $m us/request, $(awk -v a="$m" -v b="$n" 'BEGIN {printf "%.2fx", a/b}') of none"
done
