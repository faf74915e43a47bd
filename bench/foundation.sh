#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Foundation benchmark: admitd /validate with a 4 KB pod AdmissionReview over TLS keep-alive, side
# by side with nginx (Debian's) answering a static 200 of the same size over TLS. One worker each,
# pinned to core 0; wrk (one thread, 32 connections) on core 1. Rounds alternate between the two so
# machine noise hits both alike; medians and their ratio are printed.
#
#   bench/foundation.sh [ROUNDS=3] [SECONDS=10]
#   FOUNDATION_BEFORE=REV bench/foundation.sh ...   also admitd built from git revision REV, as a
#                                                    third contender in the same rounds (before/after);
#                                                    FOUNDATION_BEFORE_BIN=PATH: that admitd, already built
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
review="$bench_root/tests/fixtures/pod-create.v1.review.json"
export BENCH_REVIEW="$review"

bench_build
bench_cert
before=${FOUNDATION_BEFORE:-}
if [ -n "$before" ] && [ -n "${FOUNDATION_BEFORE_BIN:-}" ]; then
    ADMITD_REV=$FOUNDATION_BEFORE_BIN # an admitd already built from that revision
elif [ -n "$before" ]; then
    bench_build_rev "$before"
fi

admitd_port=18443
nginx_port=18444

# The exact answer admitd gives, so nginx sends the same number of bytes.
taskset -c "$SERVER_CPU" "$ADMITD" --listen "127.0.0.1:$admitd_port" --tls-cert-file "$bench_tmp/cert.pem" \
    --tls-private-key-file "$bench_tmp/key.pem" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>"$bench_tmp/admitd.log" &
bench_pids+=($!)
wait_port "$admitd_port"
answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
         --data-binary @"$review" "https://127.0.0.1:$admitd_port/validate")
[ -n "$answer" ] || { echo "admitd gave no answer" >&2; exit 1; }
printf '%s' "$answer" > "$bench_tmp/answer.json"

if [ -n "$before" ]; then
    before_port=18445
    taskset -c "$SERVER_CPU" "$ADMITD_REV" --listen "127.0.0.1:$before_port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>"$bench_tmp/admitd-before.log" &
    bench_pids+=($!)
    wait_port "$before_port"
    check=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
            --data-binary @"$review" "https://127.0.0.1:$before_port/validate")
    [ "$check" = "$answer" ] || { echo "admitd@$before does not answer like admitd: $check" >&2; exit 1; }
fi

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
        location / {
            default_type application/json;
            return 200 '$answer';
        }
    }
}
CONF
taskset -c "$SERVER_CPU" nginx -p "$bench_tmp/nginx" -c "$bench_tmp/nginx/nginx.conf" -g 'daemon off;' &
bench_pids+=($!)
wait_port "$nginx_port"
check=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
        --data-binary @"$review" "https://127.0.0.1:$nginx_port/validate")
[ "$check" = "$answer" ] || { echo "nginx does not answer like admitd: $check" >&2; exit 1; }

echo "admitd $("$ADMITD" --version | cut -d' ' -f2), $(nginx -v 2>&1 | cut -d' ' -f3); body $(wc -c < "$review") B, answer ${#answer} B"
echo "round  server  req/s  p50_ms  p99_ms  req_per_server_cpu_s"
hz=$(getconf CLK_TCK)
pid_admitd=${bench_pids[0]}; pid_before=; [ -n "$before" ] && pid_before=${bench_pids[1]}; pid_nginx=${bench_pids[-1]}
: > "$bench_tmp/admitd.rps"; : > "$bench_tmp/nginx.rps"
servers="admitd nginx"
[ -n "$before" ] && servers="admitd before nginx"
: > "$bench_tmp/before.rps"
for r in $(seq 1 "$rounds"); do
    for s in $servers; do
        port=$admitd_port; [ $s = nginx ] && port=$nginx_port; [ $s = before ] && port=$before_port
        pid_var=pid_$s; t0=$(cpu_ticks "${!pid_var}")
        read -r rps p50 p99 < <(run_wrk "https://127.0.0.1:$port/validate")
        t1=$(cpu_ticks "${!pid_var}")
        # requests per CPU-second the server itself used: robust when other load shares its core
        eff=$(awk -v rps="$rps" -v s="$secs" -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN {printf "%.0f", (t > 0 ? rps * s * hz / t : 0)}')
        echo "$eff" >> "$bench_tmp/$s.eff"
        echo "$r      $s  $rps  $p50  $p99  $eff"
        echo "$rps" >> "$bench_tmp/$s.rps"; echo "$p50" >> "$bench_tmp/$s.p50"; echo "$p99" >> "$bench_tmp/$s.p99"
        eval "rps_$s=$rps"
    done
    # per-round ratios: the contenders of one round met the same machine weather
    if [ -n "$before" ]; then
        awk -v a="$rps_admitd" -v b="$rps_before" 'BEGIN {print a / b}' >> "$bench_tmp/now_before.ratio"
    fi
done
a=$(median < "$bench_tmp/admitd.rps"); n=$(median < "$bench_tmp/nginx.rps")
echo "median req/s: admitd $a (p50 $(median < "$bench_tmp/admitd.p50") ms, p99 $(median < "$bench_tmp/admitd.p99") ms)," \
     "nginx $n (p50 $(median < "$bench_tmp/nginx.p50") ms, p99 $(median < "$bench_tmp/nginx.p99") ms)"
awk -v a="$a" -v n="$n" 'BEGIN {printf "ratio admitd/nginx: %.2fx\n", a/n}'
ea=$(median < "$bench_tmp/admitd.eff"); en=$(median < "$bench_tmp/nginx.eff")
awk -v a="$ea" -v n="$en" 'BEGIN {printf "requests per server CPU-second (median): admitd %d, nginx %d, ratio %.2fx\n", a, n, a/n}'
if [ -n "$before" ]; then
    eb=$(median < "$bench_tmp/before.eff")
    awk -v a="$ea" -v b="$eb" -v rev="$before" 'BEGIN {printf "requests per server CPU-second: admitd@%s %d; now/before %.2fx\n", rev, b, a/b}'
fi
if [ -n "$before" ]; then
    b=$(median < "$bench_tmp/before.rps")
    echo "admitd@$before: median $b req/s (p50 $(median < "$bench_tmp/before.p50") ms, p99 $(median < "$bench_tmp/before.p99") ms)"
    awk -v a="$a" -v b="$b" -v n="$n" -v rev="$before" \
        'BEGIN {printf "ratio admitd@%s/nginx: %.2fx; admitd now / admitd@%s: %.3fx (medians)\n", rev, b/n, rev, a/b}'
    echo "admitd now / admitd@$before, median of per-round ratios: $(median < "$bench_tmp/now_before.ratio")x" \
         "(rounds: $(tr '\n' ' ' < "$bench_tmp/now_before.ratio"))"
fi
