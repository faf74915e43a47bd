# SPDX-License-Identifier: Apache-2.0
# Shared helpers for bench/*.sh: build, certificates, process start/stop, medians.
# Sourced, not run. Every process a script starts is killed on exit.

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_pids=()
bench_tmp=$(mktemp -d /tmp/admitd-bench.XXXXXX)

bench_cleanup() {
    for pid in "${bench_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${bench_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$bench_tmp"
}
trap bench_cleanup EXIT

# Server on core 0, load generator on core 1 (the machines have 2 cores).
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

bench_build() {
    "$bench_root/third_party/deps.sh" >/dev/null
    cmake -S "$bench_root" -B "$bench_root/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DADM_BUILD_TESTS=OFF >/dev/null
    cmake --build "$bench_root/build-bench" >/dev/null
    ADMITD="$bench_root/build-bench/admitd"
}

# ECDSA P-256 certificate for 127.0.0.1/localhost, used by every server in a comparison.
bench_cert() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$bench_tmp/key.pem" -out "$bench_tmp/cert.pem" 2>/dev/null
}

# wait_port PORT: until something accepts on 127.0.0.1:PORT (10 s at most).
wait_port() {
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "nothing listening on 127.0.0.1:$1" >&2
    return 1
}

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# run_wrk URL [REVIEW] -> "req/s p50_ms p99_ms": wrk, one thread, 32 connections, $secs seconds, on the
# client core, POSTing REVIEW (default $BENCH_REVIEW).
run_wrk() {
    BENCH_REVIEW=${2:-$BENCH_REVIEW} taskset -c "$CLIENT_CPU" wrk -t1 -c32 -d"${secs}s" --latency \
        -s "$bench_root/bench/post.lua" "$1" > "$bench_tmp/wrk.out"
    awk '/Requests\/sec/ {rps=$2}
         function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
         $1=="50%" {p50=ms($2)} $1=="99%" {p99=ms($2)}
         END {printf "%s %.3f %.3f\n", rps, p50, p99}' "$bench_tmp/wrk.out"
}
