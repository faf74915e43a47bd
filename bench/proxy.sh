#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Webhook proxy overhead: what admitd adds to the latency of the downstream webhooks it calls, beside
# what a plain TLS reverse proxy adds in the same place. admitd-bench (open loop at RATE req/s, 64
# connections, TLS keep-alive, 4 KB pod review) drives, round by round alternating:
#   direct   admitd-bench straight at one admitd-mockhook (TLS, allow after PROXY_DELAY): the
#            upstream's own latency at this rate
#   nginx    nginx (Debian's, one worker) in admitd's place: TLS in, proxy_pass over TLS to that
#            mockhook through a keep-alive upstream pool; the floor of one hop on this machine
#   v1       admitd /validate with 1 validating webhook on that mockhook
#   v1@REV   the same, admitd built from git revision REV (PROXY_BEFORE=REV)
#   v5       admitd /validate with 5 validating webhooks, 5 mockhooks, called in parallel
#   m3       admitd /mutate with a chain of 3 mutating webhooks (3 mockhooks, each adds a label)
# admitd (Release, one worker) and nginx are pinned to core 0; admitd-bench and the mockhooks to core 1.
# Overhead = latency minus the upstreams': for nginx, v1 and v5 the direct latency at the same
# quantile (every upstream answers after the same fixed delay, so the slowest is no slower than
# one; at p99 that slightly favours the baseline, i.e. overstates the overhead); for m3, which
# calls one after another, three direct p50s at p50 and one direct p99 plus two p50s at p99.
# "over nginx" is v1 minus nginx: what admitd adds beyond a plain hop. Medians over the rounds;
# the aim (issue 17) is an overhead p99 under 100 us with one upstream answering at once.
# Per round: p99.9, the slowest request, how many took 20 ms or more (a stall of Nagle / delayed
# ACK or timer class shows there), and the server's CPU per request (its user+system time from
# /proc over the round, warm-up and the round's 64 handshakes included, per request sent).
#
#   bench/proxy.sh [ROUNDS=3] [SECONDS=10] [RATE=2000]
#   PROXY_DELAY=0ms bench/proxy.sh ...   upstreams answer at once: the overhead is then not hidden
#                                        in the jitter of their millisecond timers
#   PROXY_BEFORE=REV bench/proxy.sh ...  adds v1 on admitd built from REV to the same rounds
#   PROXY_ONLY="direct nginx v1" ...     runs only these contenders (v1@REV is named "before")
#   PROXY_RT=PRIO bench/proxy.sh ...     runs every server, mockhook and admitd-bench under
#                                        SCHED_FIFO priority PRIO (root): on a machine loaded by
#                                        other work they then preempt it, so the figures approach a
#                                        quiet machine's. Not for v5 on a busy core 1: six FIFO
#                                        processes of one priority there do not share by time slice,
#                                        and the kernel's RT throttling (95%) can stop them for 50 ms.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-2000}
warmup=2
delay=${PROXY_DELAY:-5ms}
review="$bench_root/bench/reviews/pod-4k.v1.json"
rt=()
[ -n "${PROXY_RT:-}" ] && rt=(chrt -f "$PROXY_RT")

bench_build
BENCH="$bench_root/build-bench/bench/admitd-bench"
MOCK="$bench_root/build-bench/bench/admitd-mockhook"
bench_cert
ca_b64=$(base64 -w0 "$bench_tmp/cert.pem")
if [ -n "${PROXY_BEFORE:-}" ]; then
    bench_build_rev "$PROXY_BEFORE"
fi

# ports BASE..BASE+7 for the mockhooks (all with the same certificate, on the client core),
# BASE+10, +11, +12 for the three admitd, +13 nginx, +14 the REV admitd (PROXY_BENCH_PORT, default 28450)
base=${PROXY_BENCH_PORT:-28450}
mock_port=$base
start_mock() { # PORT [ARGS...]
    local port=$1
    shift
    port_free "$port"
    "${rt[@]}" taskset -c "$CLIENT_CPU" "$MOCK" --listen "127.0.0.1:$port" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --delay "$delay" "$@" 2>"$bench_tmp/mock-$port.log" &
    bench_pids+=($!)
    wait_port "$port"
}

# every contender unless PROXY_ONLY names some
wanted() { [ -z "${PROXY_ONLY:-}" ] || [[ " $PROXY_ONLY " == *" $1 "* ]]; }
contenders=()
for c in direct nginx v1 before v5 m3; do
    [ "$c" = before ] && [ -z "${PROXY_BEFORE:-}" ] && continue
    wanted "$c" && contenders+=("$c")
done

for i in 0 1 2 3 4; do start_mock $((mock_port + i)) --behavior allow; done
for i in 0 1 2; do
    start_mock $((mock_port + 5 + i)) --behavior "patch:[{\"op\":\"add\",\"path\":\"/metadata/labels/proxy-bench-$i\",\"value\":\"x\"}]"
done

hook() { # NAME PORT PATH
    cat <<EOF
- name: $1
  clientConfig: {url: "https://127.0.0.1:$2$3", caBundle: "$ca_b64"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
  failurePolicy: Fail
EOF
}
config_head() { # KIND NAME
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: %s\nmetadata: {name: %s}\nwebhooks:\n' "$1" "$2"
}
# The configurations live in a folder of their own: admitd watches the folders of the files it is
# given, and this script writes its results into $bench_tmp while admitd runs.
mkdir -p "$bench_tmp/conf"
{ config_head ValidatingWebhookConfiguration v1; hook v0.proxy-bench.example $mock_port /v; } > "$bench_tmp/conf/v1.yaml"
{ config_head ValidatingWebhookConfiguration v5
  for i in 0 1 2 3 4; do hook "v$i.proxy-bench.example" $((mock_port + i)) /v; done; } > "$bench_tmp/conf/v5.yaml"
{ config_head MutatingWebhookConfiguration m3
  for i in 0 1 2; do hook "m$i.proxy-bench.example" $((mock_port + 5 + i)) /m; done; } > "$bench_tmp/conf/m3.yaml"
cp "$bench_tmp/cert.pem" "$bench_tmp/key.pem" "$bench_tmp/conf/"

declare -A url pid
url[direct]="https://127.0.0.1:$mock_port/v"
pid[direct]=${bench_pids[0]}
start_proxy_admitd() { # NAME BINARY CONFIG PORT PATH
    port_free "$4"
    "${rt[@]}" taskset -c "$SERVER_CPU" "$2" --listen "127.0.0.1:$4" --tls-cert-file "$bench_tmp/conf/cert.pem" \
        --tls-private-key-file "$bench_tmp/conf/key.pem" --webhook-config "$bench_tmp/conf/$3.yaml" \
        --shutdown-delay 0s --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" \
        2>"$bench_tmp/admitd-$1.log" &
    bench_pids+=($!)
    pid[$1]=$!
    wait_port "$4"
    url[$1]="https://127.0.0.1:$4/$5"
}
wanted v1 && start_proxy_admitd v1 "$ADMITD" v1 $((base + 10)) validate
wanted v5 && start_proxy_admitd v5 "$ADMITD" v5 $((base + 11)) validate
wanted m3 && start_proxy_admitd m3 "$ADMITD" m3 $((base + 12)) mutate
[ -n "${PROXY_BEFORE:-}" ] && wanted before && start_proxy_admitd before "$ADMITD_REV" v1 $((base + 14)) validate

# nginx as the hop: TLS in, TLS out to the v1 mockhook over a keep-alive pool (verified, sessions reused)
if wanted nginx; then
    dir="$bench_tmp/nginx"
    port=$((base + 13))
    port_free "$port"
    mkdir -p "$dir"
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path $dir;
    client_body_buffer_size 64k;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    upstream hook {
        server 127.0.0.1:$mock_port;
        keepalive 64;
        keepalive_requests 100000000;
        keepalive_timeout 120s;
    }
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $bench_tmp/cert.pem;
        ssl_certificate_key $bench_tmp/key.pem;
        location = /validate {
            proxy_pass https://hook/v;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate $bench_tmp/cert.pem;
            proxy_ssl_name localhost;
            proxy_ssl_server_name on;
            proxy_ssl_session_reuse on;
        }
    }
}
CONF
    "${rt[@]}" taskset -c "$SERVER_CPU" nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' 2>>"$dir/error.log" &
    bench_pids+=($!)
    pid[nginx]=$!
    wait_port "$port"
    url[nginx]="https://127.0.0.1:$port/validate"
fi

# one request through each, checked by hand-written expectations
for c in "${contenders[@]}"; do
    answer=$(curl -sS --cacert "$bench_tmp/cert.pem" -H 'Content-Type: application/json' \
             --data-binary @"$review" "${url[$c]}")
    case "$c:$answer" in
    m3:*'"allowed":true'*'"patch":'*) ;;
    m3:*) echo "unexpected $c answer: $answer" >&2; exit 1 ;;
    *:*'"allowed":true'*) ;;
    *) echo "unexpected $c answer: $answer" >&2; exit 1 ;;
    esac
done

# server_ticks C: user+system clock ticks of contender C's server (nginx: with its worker)
server_ticks() { cpu_ticks "${pid[$1]}"; }

# run_round C -> "p50_us p99_us p999_us max_us slow_ge_20ms not_allowed cpu_us_per_request":
# admitd-bench on the client core, open loop at $rate, after a warm-up (connections up).
run_round() {
    local t0 t1
    t0=$(server_ticks "$1")
    "${rt[@]}" taskset -c "$CLIENT_CPU" "$BENCH" --url "${url[$1]}" --cacert "$bench_tmp/cert.pem" --review "$review" \
        --rate "$rate" --connections 64 --warmup "${warmup}s" --duration "${secs}s" --timeout 10s \
        --json "$bench_tmp/run.json" > "$bench_tmp/run.txt" 2>&1 || { cat "$bench_tmp/run.txt" >&2; return 1; }
    t1=$(server_ticks "$1")
    awk -v ticks=$((t1 - t0)) -v hz="$clk_tck" -v total="$(awk -v r="$rate" -v s="$secs" -v w="$warmup" 'BEGIN {print r * (s + w)}')" '
        /"requests": *\{"sent":/ { match($0, /"sent": *[0-9]+/); sent = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", sent)
                    match($0, /"allowed": *[0-9]+/); ok = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", ok) }
        /"latency_ns":/ { split($0, f, /[{},:]/)
                    for (i = 1; i < length(f); i++) { k = f[i]; gsub(/[" ]/, "", k); v = f[i + 1] + 0
                        if (k == "p50") p50 = v; if (k == "p99") p99 = v; if (k == "p99.9") p999 = v; if (k == "max") mx = v } }
        /^ *\[[0-9]+, *[0-9]+, *[0-9]+\]/ { gsub(/[][ ]/, ""); split($0, h, ","); if (h[1] >= 20000000) slow += h[3] }
        END { printf "%.1f %.1f %.1f %.1f %d %d %.1f\n", p50 / 1000, p99 / 1000, p999 / 1000, mx / 1000, slow,
                     sent - ok, ticks / hz * 1e6 / total }' "$bench_tmp/run.json"
}

echo "admitd $("$ADMITD" --version | cut -d' ' -f2)${PROXY_BEFORE:+ (before: $PROXY_BEFORE)}; $(nginx -v 2>&1 | sed 's/.*: //');" \
     "body $(wc -c < "$review") B; $rate req/s; upstream delay $delay${PROXY_RT:+; SCHED_FIFO $PROXY_RT}"
echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round  contender  p50_us  p99_us  p99.9_us  max_us  >=20ms  not_allowed  server_cpu_us/req"
for r in $(seq 1 "$rounds"); do
    for c in "${contenders[@]}"; do
        quiet_wait
        read -r p50 p99 p999 mx slow bad cpu < <(run_round "$c")
        echo "$r      $c  $p50  $p99  $p999  $mx  $slow  $bad  $cpu"
        echo "$p50" >> "$bench_tmp/$c.p50"; echo "$p99" >> "$bench_tmp/$c.p99"; echo "$cpu" >> "$bench_tmp/$c.cpu"
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { median < "$bench_tmp/$1.$2"; }
if wanted direct; then
    d50=$(med direct p50); d99=$(med direct p99)
    echo "median direct (upstream alone): p50 $d50 us, p99 $d99 us; mockhook CPU $(med direct cpu) us/req"
    for c in nginx v1 before v5 m3; do
        [ -f "$bench_tmp/$c.p50" ] || continue
        awk -v c="$c" -v a50="$(med "$c" p50)" -v a99="$(med "$c" p99)" -v cpu="$(med "$c" cpu)" \
            -v d50="$d50" -v d99="$d99" 'BEGIN {
            b50 = d50; b99 = d99
            if (c == "m3") { b50 = 3 * d50; b99 = d99 + 2 * d50 }
            printf "median %s: p50 %.1f us, p99 %.1f us; overhead p50 %.1f us, p99 %.1f us", c, a50, a99, a50 - b50, a99 - b99
            if (c != "nginx") printf " (aim p99 < 100 us: %s)", (a99 - b99 < 100) ? "met" : "not met"
            printf "; server CPU %.1f us/req\n", cpu }'
    done
fi
if [ -f "$bench_tmp/nginx.p50" ]; then
    for c in v1 before; do
        [ -f "$bench_tmp/$c.p50" ] || continue
        awk -v c="$c" -v a50="$(med "$c" p50)" -v a99="$(med "$c" p99)" -v n50="$(med nginx p50)" \
            -v n99="$(med nginx p99)" -v ac="$(med "$c" cpu)" -v nc="$(med nginx cpu)" 'BEGIN {
            printf "%s over nginx (what admitd adds beyond a plain TLS hop): p50 %.1f us, p99 %.1f us, server CPU %.1f us/req\n",
                   c, a50 - n50, a99 - n99, ac - nc }'
    done
fi
