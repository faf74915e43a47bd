#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Instructions per request, counted by valgrind's callgrind (deterministic whatever the machine's
# load, unlike time), for the configurations of bench/chain.sh and bench/peers.sh:
#   full-admit     /admit, kube's whole default set over bench/cluster/full.yaml, realistic pod
#   bare-validate  /validate with every plugin disabled, realistic pod
#   validate-4k    /validate, default set over tests/fixtures/cluster-state.yaml, bench/reviews/pod-4k.v1.json
#                  (the review of bench/peers.sh)
# Two counts each:
#   in-process     bench/tools/chain-cost MODE: decode + chain + encode, no sockets (callgrind
#                  --toggle-collect on the request loop, divided by the requests)
#   server         admitd over TLS (the bench certificate, TLS 1.3) answering N requests on one
#                  keep-alive connection from bench/tools/fixed-requests.py; the difference of
#                  two runs (LOW and HIGH requests) divided by HIGH - LOW, so start-up, the
#                  handshake and shutdown cancel out. User space only: the kernel's share of a
#                  request (socket reads and writes) is not in these counts.
# Counts depend on the build (compiler, flags): compare figures from one build directory. Callgrind
# counts a `rep movs`/`rep stos` (glibc's memcpy/memset for large blocks) once per iteration, so
# large copies look dearer than they run.
#
#   bench/callgrind.sh [BUILD_DIR=build-bench] [LOW=200] [HIGH=1200] [IN_PROCESS_N=1000]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
build=${1:-build-bench}
low=${2:-200}
high=${3:-1200}
n=${4:-1000}
case "$build" in /*) ;; *) build="$bench_root/$build" ;; esac
if [ "$build" = "$bench_root/build-bench" ]; then
    bench_build
fi
admitd="$build/admitd"
cost="$build/bench/chain-cost"
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
bench_cert

realistic="$bench_root/bench/reviews/pod-create-untolerated.v1.json"
pod4k="$bench_root/bench/reviews/pod-4k.v1.json"
full_state="$bench_root/bench/cluster/full.yaml"
fixture_state="$bench_root/tests/fixtures/cluster-state.yaml"
defaults=$("$admitd" --list-plugins | awk '$(NF-1) == "on" {print $1}' | paste -sd, -)

# in_process REVIEW STATE DISABLE MODE -> instructions per request
in_process() {
    valgrind --tool=callgrind "--toggle-collect=run_requests*" --callgrind-out-file="$bench_tmp/cg.out" \
        "$cost" "$1" - "$n" "$2" "$3" "$4" > /dev/null 2> "$bench_tmp/cg.log"
    awk -v n="$n" '/Collected :/ {printf "%.0f\n", $NF / n}' "$bench_tmp/cg.log"
}

# server_run PATH REVIEW REQUESTS [ADMITD FLAGS...] -> instructions of the whole run
port=18490
server_run() {
    local path=$1 review=$2 requests=$3 pid
    shift 3
    port_free "$port"
    valgrind --tool=callgrind --callgrind-out-file="$bench_tmp/srv.out" "$admitd" --listen "127.0.0.1:$port" \
        --tls-cert-file "$bench_tmp/cert.pem" --tls-private-key-file "$bench_tmp/key.pem" --shutdown-delay 0s \
        "$@" 2> "$bench_tmp/srv.log" &
    pid=$!
    for _ in $(seq 1 600); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    python3 "$bench_root/bench/tools/fixed-requests.py" 127.0.0.1 "$port" "/$path" "$review" "$requests" \
        "$bench_tmp/cert.pem" > "$bench_tmp/answer.json"
    kill -TERM "$pid"
    wait "$pid" || true
    awk '/Collected :/ {print $NF}' "$bench_tmp/srv.log"
}

# server PATH REVIEW [ADMITD FLAGS...] -> instructions per request
server() {
    local a b
    a=$(server_run "$1" "$2" "$low" "${@:3}")
    b=$(server_run "$1" "$2" "$high" "${@:3}")
    awk -v a="$a" -v b="$b" -v d=$((high - low)) 'BEGIN {printf "%.0f\n", (b - a) / d}'
}

echo "admitd $("$admitd" --version | cut -d' ' -f2), build $build; valgrind $(valgrind --version)"
echo "instructions per request (in-process: $n requests; server: ($high - $low requests) over TLS keep-alive)"
printf '%-14s %12s %12s\n' configuration in-process server
fi_ip=$(in_process "$realistic" "$full_state" - admit)
fi_sv=$(server admit "$realistic" --cluster-state "$full_state")
printf '%-14s %12s %12s\n' full-admit "$fi_ip" "$fi_sv"
bv_ip=$(in_process "$realistic" - "$defaults" validate)
bv_sv=$(server validate "$realistic" --disable-admission-plugins "$defaults")
printf '%-14s %12s %12s\n' bare-validate "$bv_ip" "$bv_sv"
v4_ip=$(in_process "$pod4k" "$fixture_state" - validate)
v4_sv=$(server validate "$pod4k" --cluster-state "$fixture_state")
printf '%-14s %12s %12s\n' validate-4k "$v4_ip" "$v4_sv"
echo "full-admit / bare-validate (server, user space): $(awk -v f="$fi_sv" -v b="$bv_sv" 'BEGIN {printf "%.2f", f / b}')x the instructions"
