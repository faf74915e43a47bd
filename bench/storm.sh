#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Connection storm (issue 17, item 3): keep-alive traffic (wrk, one thread, 16 connections, the 4 KB
# pod review) runs against a server while bench/tools/burst.c opens N new TLS connections at once
# (full handshake and one POST each), BURSTS times; wrk runs STORM_SECS (default 20) seconds, the
# bursts starting 2 s in (on a loaded machine a burst of 500 can take longer than that: lower N). What matters is what the storm does
# to the requests already in flight: wrk's p99 and slowest request, against the same run without
# a storm. admitd (and, with STORM_BEFORE=REV, admitd built from REV) and nginx (Debian's, one
# worker, static 200 of admitd's answer) take turns, pinned to core 0; wrk and the bursts share
# core 1. Medians over ROUNDS.
#
#   bench/storm.sh [CONNECTIONS=500] [BURSTS=3] [ROUNDS=3]
#   STORM_BEFORE=REV [BENCH_REV_PREFIX=DIR] bench/storm.sh ...
#   STORM_RSA=1 bench/storm.sh ...    RSA-2048 certificate instead of ECDSA P-256 (what RSA costs)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
conns=${1:-500}
bursts=${2:-3}
rounds=${3:-3}
review="$bench_root/tests/fixtures/pod-create.v1.review.json"
export BENCH_REVIEW="$review"
admitd_port=18471 nginx_port=18472 before_port=18473
for p in $admitd_port $nginx_port $before_port; do port_free "$p"; done

bench_build
if [ -n "${STORM_RSA:-}" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$bench_tmp/key.pem" -out "$bench_tmp/cert.pem" 2>/dev/null
else
    bench_cert
fi
before=${STORM_BEFORE:-}
[ -n "$before" ] && bench_build_rev "$before"

start_admitd() { # BIN PORT
    taskset -c "$SERVER_CPU" "$1" --listen "127.0.0.1:$2" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>>"$bench_tmp/admitd-$2.log" &
    bench_pids+=($!)
    wait_port "$2"
}
start_admitd "$ADMITD" $admitd_port
[ -n "$before" ] && start_admitd "$ADMITD_REV" $before_port
answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
         --data-binary @"$review" "https://127.0.0.1:$admitd_port/validate")
mkdir -p "$bench_tmp/nginx"
cat > "$bench_tmp/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $bench_tmp/nginx/nginx.pid;
error_log $bench_tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path $bench_tmp/nginx;
    client_body_buffer_size 64k;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    server {
        listen 127.0.0.1:$nginx_port ssl;
        ssl_certificate $bench_tmp/cert.pem;
        ssl_certificate_key $bench_tmp/key.pem;
        location / { default_type application/json; return 200 '$answer'; }
    }
}
CONF
taskset -c "$SERVER_CPU" nginx -p "$bench_tmp/nginx" -c "$bench_tmp/nginx/nginx.conf" -g 'daemon off;' &
bench_pids+=($!)
wait_port "$nginx_port"

secs=${STORM_SECS:-20}
# one_run PORT STORM -> "p50_ms p99_ms max_ms handshake_p50_ms handshake_max_ms"
one_run() {
    local port=$1 storm=$2
    taskset -c "$CLIENT_CPU" wrk -t1 -c16 -d"${secs}s" --latency -s "$bench_root/bench/post.lua" \
        "https://127.0.0.1:$port/validate" > "$bench_tmp/wrk.out" &
    local wrk_pid=$!
    : > "$bench_tmp/burst.out"
    if [ "$storm" = 1 ]; then
        sleep 2
        taskset -c "$CLIENT_CPU" "$bench_root/build-bench/bench/burst" "$port" "$bench_tmp/cert.pem" "$review" \
            "$conns" "$bursts" > "$bench_tmp/burst.out" 2>&1 || echo "burst failed: $(tail -1 "$bench_tmp/burst.out")" >&2
    fi
    wait "$wrk_pid"
    awk 'function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
         $1=="Latency" && !lat {mx=ms($4); lat=1} $1=="50%" {p50=ms($2)} $1=="99%" {p99=ms($2)}
         END {printf "%.3f %.3f %.3f", p50, p99, mx}' "$bench_tmp/wrk.out"
    awk '/p50/ {for (i=1;i<=NF;i++) if ($i ~ /^p50/) v=$(i+1)} END {printf " %s\n", v==""?"-":v}' "$bench_tmp/burst.out"
}
servers="admitd nginx"; [ -n "$before" ] && servers="admitd before nginx"
echo "$(lscpu | sed -n 's/^Model name: *//p'); $conns connections x $bursts bursts; wrk -c16 keep-alive"
echo "round server storm wrk_p50_ms wrk_p99_ms wrk_max_ms burst_p50"
for r in $(seq 1 "$rounds"); do
    for s in $servers; do
        port=$admitd_port; [ $s = nginx ] && port=$nginx_port; [ $s = before ] && port=$before_port
        for storm in 0 1; do
            read -r p50 p99 mx bp50 < <(one_run "$port" "$storm")
            echo "$r $s $storm $p50 $p99 $mx $bp50"
            echo "$p99" >> "$bench_tmp/$s-$storm.p99"; echo "$mx" >> "$bench_tmp/$s-$storm.max"
        done
    done
done
for s in $servers; do
    echo "median $s: quiet p99 $(median < "$bench_tmp/$s-0.p99") ms; during the storm p99 $(median < "$bench_tmp/$s-1.p99") ms," \
         "slowest $(median < "$bench_tmp/$s-1.max") ms"
done
