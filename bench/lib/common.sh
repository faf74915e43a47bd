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

# bench_build_rev REV: a Release admitd built from git revision REV (a worktree in $bench_tmp, the
# dependency prefix shared); sets ADMITD_REV to its path. For before/after comparisons in one run.
bench_build_rev() {
    local rev=$1 tree="$bench_tmp/rev-src"
    git -C "$bench_root" worktree add --detach -f "$tree" "$rev" >/dev/null 2>&1
    # BENCH_REV_PREFIX: another dependency prefix for the old build (a before/after of a dependency change)
    ln -s "${BENCH_REV_PREFIX:-$bench_root/third_party/prefix}" "$tree/third_party/prefix"
    cmake -S "$tree" -B "$bench_tmp/rev-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADM_BUILD_TESTS=OFF \
          >/dev/null
    cmake --build "$bench_tmp/rev-build" --target admitd >/dev/null
    ADMITD_REV="$bench_tmp/rev-build/admitd"
    cp "$ADMITD_REV" "$bench_tmp/admitd-rev"
    ADMITD_REV="$bench_tmp/admitd-rev"
    git -C "$bench_root" worktree remove --force "$tree"
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

# cpu_ticks PID: user+system clock ticks of PID and its children (nginx's worker), so a server's
# work per request can be compared on a machine where other load steals its core.
cpu_ticks() {
    local total=0 p
    for p in "$1" $(pgrep -P "$1" || true); do
        [ -r "/proc/$p/stat" ] || continue
        total=$((total + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

# with_proc_cpu FILE CMD...: runs CMD in the foreground and writes to FILE the CPU seconds (user +
# system) it used, its threads and children included, from /proc: the growth of this shell's
# cutime + cstime (fields 16 and 17 of /proc/PID/stat), which the kernel adds a child to when it is
# reaped. Builtins only between the two reads, so nothing else of the shell is counted.
clk_tck=$(getconf CLK_TCK)
children_ticks() {  # children_ticks VAR (no fork: a subshell would read its own /proc entry)
    local line f
    read -r line < "/proc/$BASHPID/stat"
    read -ra f <<< "${line##*) }"  # the fields after "PID (COMM) ", from field 3 on
    printf -v "$1" '%d' $((f[13] + f[14]))
}
with_proc_cpu() {
    local file=$1 before after rc=0
    shift
    children_ticks before
    "$@" || rc=$?
    children_ticks after
    awk -v t=$((after - before)) -v hz="$clk_tck" 'BEGIN {printf "%.2f\n", t / hz}' > "$file"
    return "$rc"
}

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# run_wrk URL [REVIEW] -> "req/s p50_ms p99_ms": wrk, one thread, 32 connections, $secs seconds, on the
# client core, POSTing REVIEW (default $BENCH_REVIEW).
# wrk's CPU seconds (from /proc) are left in $bench_tmp/client.cpu.
run_wrk() {
    BENCH_REVIEW=${2:-$BENCH_REVIEW} with_proc_cpu "$bench_tmp/client.cpu" taskset -c "$CLIENT_CPU" \
        wrk -t1 -c32 -d"${secs}s" --latency -s "$bench_root/bench/post.lua" "$1" > "$bench_tmp/wrk.out"
    awk '/Requests\/sec/ {rps=$2}
         function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
         $1=="50%" {p50=ms($2)} $1=="99%" {p99=ms($2)}
         END {printf "%s %.3f %.3f\n", rps, p50, p99}' "$bench_tmp/wrk.out"
}

# --- helpers for the admitd-bench scripts (bench-vs-wrk.sh, coordinated-omission.sh, peers.sh) ---

# port_free PORT: fails when something already accepts on 127.0.0.1:PORT (another session's server
# would otherwise be measured in place of ours).
port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        echo "127.0.0.1:$1 is already in use; free it or change the script's ports" >&2
        return 1
    fi
}

# bench_tools: sets BENCH and MOCKHOOK (built by bench_build).
bench_tools() {
    BENCH="$bench_root/build-bench/bench/admitd-bench"
    MOCKHOOK="$bench_root/build-bench/bench/admitd-mockhook"
}

# start_admitd PORT tls|plain [ADMITD FLAGS...]: admitd on the server core, no drain delay on exit.
start_admitd() {
    local port=$1 mode=$2; shift 2
    local tls=(--tls-cert-file "$bench_tmp/cert.pem" --tls-private-key-file "$bench_tmp/key.pem")
    [ "$mode" = plain ] && tls=(--insecure-http)
    port_free "$port"
    taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$port" "${tls[@]}" --shutdown-delay 0s \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" "$@" \
        2>"$bench_tmp/admitd-$port.log" &
    bench_pids+=($!)
    wait_port "$port"
}

# start_nginx PORT tls|plain ANSWER: one nginx worker on the server core answering every request with
# the constant ANSWER (as foundation.sh does). NGINX_CONNECTIONS (default 4096) and NGINX_KEEPALIVE
# (default 120s) for benchmarks that hold many idle connections.
start_nginx() {
    local port=$1 mode=$2 answer=$3 dir="$bench_tmp/nginx-$1" listen ssl=""
    port_free "$port"
    mkdir -p "$dir"
    listen="listen 127.0.0.1:$port;"
    if [ "$mode" = tls ]; then
        listen="listen 127.0.0.1:$port ssl;"
        ssl="ssl_certificate $bench_tmp/cert.pem; ssl_certificate_key $bench_tmp/key.pem;"
    fi
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
worker_rlimit_nofile $(( ${NGINX_CONNECTIONS:-4096} + 64 ));
events { worker_connections ${NGINX_CONNECTIONS:-4096}; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout ${NGINX_KEEPALIVE:-120s};
    client_body_temp_path $dir;
    client_body_buffer_size 64k;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    server {
        $listen
        $ssl
        location / {
            default_type application/json;
            return 200 '$answer';
        }
    }
}
CONF
    taskset -c "$SERVER_CPU" nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' 2>>"$dir/error.log" &
    bench_pids+=($!)
    wait_port "$port"
}

# start_mockhook PORT [MOCKHOOK FLAGS...]: admitd-mockhook over plain HTTP on the server core.
start_mockhook() {
    local port=$1; shift
    port_free "$port"
    taskset -c "$SERVER_CPU" "$MOCKHOOK" --listen "127.0.0.1:$port" --insecure-http "$@" \
        2>"$bench_tmp/mockhook-$port.log" &
    bench_pids+=($!)
    wait_port "$port"
}

# webhook_yaml KIND CONFIG HOOK URL [TIMEOUT_S=10] [POLICY=Fail]: a configuration of one webhook
# on every resource, trusting $ca_b64 (the bench certificate, base64).
webhook_yaml() {
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: %s\nmetadata: {name: %s}\nwebhooks:\n' "$1" "$2"
    printf -- '- name: %s\n  clientConfig: {url: "%s", caBundle: "%s"}\n' "$3" "$4" "$ca_b64"
    printf '  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]\n'
    printf '  sideEffects: None\n  admissionReviewVersions: ["v1"]\n  timeoutSeconds: %s\n  failurePolicy: %s\n' \
        "${5:-10}" "${6:-Fail}"
}

# start_go_webhook PORT: the Go peer (bench/peers, built into build-bench/peers) with GOMAXPROCS=1
# on the server core, over TLS with the shared certificate.
start_go_webhook() {
    "$bench_root/bench/peers/build.sh" "$bench_root/build-bench/peers" >"$bench_tmp/go-build.log" 2>&1 ||
        { cat "$bench_tmp/go-build.log" >&2; return 1; }
    port_free "$1"
    GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$bench_root/build-bench/peers/go-webhook" -listen "127.0.0.1:$1" \
        -cert "$bench_tmp/cert.pem" -key "$bench_tmp/key.pem" 2>"$bench_tmp/go-webhook.log" &
    bench_pids+=($!)
    wait_port "$1"
}

# run_bench URL REVIEW [ADMITD-BENCH FLAGS...] -> "req/s p50_ms p99_ms client_cpu% answered errors":
# admitd-bench on the client core for $secs seconds (default flags: closed loop, 32 connections).
# The full text report is left in $bench_tmp/bench.out, its CPU seconds (from /proc) in
# $bench_tmp/client.cpu.
run_bench() {
    quiet_wait
    local url=$1 review=$2; shift 2
    local ca=(); case "$url" in https:*) ca=(--cacert "$bench_tmp/cert.pem") ;; esac
    [ $# -gt 0 ] || set -- --closed --connections 32
    with_proc_cpu "$bench_tmp/client.cpu" taskset -c "$CLIENT_CPU" "$BENCH" --url "$url" "${ca[@]}" \
        --review "$review" --duration "${secs}s" "$@" > "$bench_tmp/bench.out" 2>"$bench_tmp/bench.err" || true
    awk '/^requests:/ {ok=$4+$6; err=$8}
         /^throughput:/ {rps=$2}
         /^latency/ {for (i=1;i<=NF;i++) {if ($i=="p50") p50=$(i+1); if ($i=="p99") p99=$(i+1)}; gsub(",","",p50); gsub(",","",p99)}
         /^client CPU:/ {cpu=$3; sub("%","",cpu)}
         END {printf "%.0f %s %s %s %d %d\n", rps, p50, p99, cpu, ok, err}' "$bench_tmp/bench.out"
}

# run_wrk_cpu URL [REVIEW] -> "req/s p50_ms p99_ms client_cpu%": run_wrk plus wrk's own CPU (user +
# system) as a percentage of one core over the run.
run_wrk_cpu() {
    quiet_wait
    local out
    TIMEFORMAT='%U %S %R'
    { time run_wrk "$@" > "$bench_tmp/wrk.line"; } 2> "$bench_tmp/wrk.time"
    read -r out < "$bench_tmp/wrk.line"
    echo "$out $(awk '{printf "%.0f", ($1+$2)/$3*100}' "$bench_tmp/wrk.time")"
}

# quiet_wait: these machines are shared; before a measurement wait (up to $BENCH_QUIET_MAX seconds,
# default 10) for a half second in which both cores are at least 80% idle, so a round does not start
# in the middle of someone else's compile. Prints nothing; a round that could not wait still runs.
quiet_wait() {
    local deadline=$((SECONDS + ${BENCH_QUIET_MAX:-10})) a b
    while [ "$SECONDS" -lt "$deadline" ]; do
        a=$(awk '/^cpu[0-9]/ {printf "%s %d %d ", $1, $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
        sleep 0.5
        b=$(awk '/^cpu[0-9]/ {printf "%s %d %d ", $1, $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
        if awk -v a="$a" -v b="$b" 'BEGIN {n = split(a, x, " "); split(b, y, " ")
                for (i = 1; i <= n; i += 3) if (y[i+2] > x[i+2] && (y[i+1] - x[i+1]) / (y[i+2] - x[i+2]) < 0.8) exit 1
                exit 0 }'; then
            return 0
        fi
    done
}
