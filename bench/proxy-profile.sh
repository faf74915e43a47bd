#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Where the proxy's cost per request goes: one admitd /validate with one validating webhook on an
# admitd-mockhook answering at once (TLS both ways, the 4 KB pod review), driven by admitd-bench
# open loop at RATE req/s for SECONDS, with either `strace -c -f` or `perf record -g` attached to
# admitd for the run. Prints syscalls per proxied request (strace) or the top of the profile
# (perf), each normalised by the requests admitd-bench sent. With PROXY_BEFORE=REV the same is
# done for admitd built from REV, right after (one run, same machine state).
#
#   bench/proxy-profile.sh strace|perf|cpu [SECONDS=6] [RATE=2000]
#   PROXY_BEFORE=56ae902 bench/proxy-profile.sh strace
#   PROXY_KEEP=DIR bench/proxy-profile.sh perf     keeps perf-*.data / strace-*.txt in DIR
# "cpu" attaches nothing and prints admitd's own CPU time per request (/proc schedstat) and the latency
# overhead over admitd-bench straight at the mockhook (`direct`), medians of PROXY_ROUNDS
# (default 3) rounds alternating direct, before (when given) and after.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
mode=${1:-strace}
secs=${2:-6}
rate=${3:-2000}
rounds=${PROXY_ROUNDS:-3}
review="$bench_root/bench/reviews/pod-4k.v1.json"
case "$mode" in strace | perf | cpu) ;; *) echo "mode: strace, perf or cpu" >&2; exit 2 ;; esac

bench_build
BENCH="$bench_root/build-bench/bench/admitd-bench"
MOCK="$bench_root/build-bench/bench/admitd-mockhook"
bench_cert
ca_b64=$(base64 -w0 "$bench_tmp/cert.pem")
declare -A bin
bin[after]=$ADMITD
contenders=(after)
if [ -n "${PROXY_BEFORE:-}" ]; then
    bench_build_rev "$PROXY_BEFORE"
    bin[before]=$ADMITD_REV
    contenders=(before after)
fi

base=${PROXY_BENCH_PORT:-28470}
# the upstream: TLS, answers at once, on the client core with the load generator (as bench/proxy.sh)
taskset -c "$CLIENT_CPU" "$MOCK" --tls-cert-file "$bench_tmp/cert.pem" --tls-private-key-file "$bench_tmp/key.pem" \
    --listen "127.0.0.1:$base" --behavior allow --delay 0ms 2>"$bench_tmp/mock.log" &
bench_pids+=($!)
wait_port "$base"
webhook_yaml ValidatingWebhookConfiguration v1 v0.proxy-bench.example "https://127.0.0.1:$base/v" \
    > "$bench_tmp/v1.yaml"

declare -A pid port
p=$((base + 1))
for c in "${contenders[@]}"; do
    taskset -c "$SERVER_CPU" "${bin[$c]}" --listen "127.0.0.1:$p" --tls-cert-file "$bench_tmp/cert.pem" \
        --tls-private-key-file "$bench_tmp/key.pem" --webhook-config "$bench_tmp/v1.yaml" \
        --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml" 2>"$bench_tmp/admitd-$c.log" &
    pid[$c]=$!
    bench_pids+=($!)
    port[$c]=$p
    wait_port "$p"
    p=$((p + 1))
done

# cpu_ns PID: nanoseconds PID's threads have run (schedstat), finer than clock ticks and, like
# them, blind to time other load takes from the core
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{t += $1} END {printf "%.0f", t}'; }

# drive URL -> requests sent (admitd-bench open loop, no warm-up: the attach covers the whole run)
drive() {
    taskset -c "$CLIENT_CPU" "$BENCH" --url "$1" --cacert "$bench_tmp/cert.pem" --review "$review" \
        --rate "$rate" --connections 64 --duration "${secs}s" --timeout 10s \
        --json "$bench_tmp/run.json" > "$bench_tmp/run.txt" 2>&1 || { cat "$bench_tmp/run.txt" >&2; return 1; }
    tr -d '\n ' < "$bench_tmp/run.json" | sed -E 's/.*"requests":\{"sent":([0-9]+).*"latency_ns":\{[^}]*"p50":([0-9]+),"p90":[0-9]+,"p99":([0-9]+).*/\1 \2 \3/'
    echo
}

echo "admitd $("$ADMITD" --version | cut -d' ' -f2); body $(wc -c < "$review") B; $rate req/s for ${secs}s; $(uptime | sed 's/.*load/load/')"
for c in "${contenders[@]}"; do
    url="https://127.0.0.1:${port[$c]}/validate"
    drive "$url" > /dev/null # warm: connections up, upstream pool dialled
done
if [ "$mode" = cpu ]; then
    echo "round  contender  sent  p50_us  p99_us  admitd_cpu_us_per_request"
    # direct: admitd-bench straight at the mockhook, the upstream's own latency (overhead baseline)
    port[direct]=$base
    for r in $(seq 1 "$rounds"); do
        for c in direct "${contenders[@]}"; do
            quiet_wait
            url="https://127.0.0.1:${port[$c]}/validate"
            [ "$c" = direct ] && url="https://127.0.0.1:$base/v"
            t0=$(cpu_ns "${pid[$c]:-$$}")
            read -r sent p50 p99 < <(drive "$url")
            t1=$(cpu_ns "${pid[$c]:-$$}")
            us=$(awk -v t="$((t1 - t0))" -v n="$sent" 'BEGIN {printf "%.1f", t / 1000 / n}')
            [ "$c" = direct ] && us=0
            echo "$r  $c  $sent  $((p50 / 1000))  $((p99 / 1000))  $us"
            echo "$us" >> "$bench_tmp/$c.cpu"; echo "$((p99 / 1000))" >> "$bench_tmp/$c.p99"
            echo "$((p50 / 1000))" >> "$bench_tmp/$c.p50"
        done
    done
    d50=$(median < "$bench_tmp/direct.p50"); d99=$(median < "$bench_tmp/direct.p99")
    echo "median direct (upstream alone): p50 $d50 us, p99 $d99 us"
    for c in "${contenders[@]}"; do
        a50=$(median < "$bench_tmp/$c.p50"); a99=$(median < "$bench_tmp/$c.p99")
        echo "median $c: admitd CPU $(median < "$bench_tmp/$c.cpu") us/request, p50 $a50 us, p99 $a99 us;" \
             "overhead p50 $((a50 - d50)) us, p99 $((a99 - d99)) us"
    done
    exit 0
fi
for c in "${contenders[@]}"; do
    url="https://127.0.0.1:${port[$c]}/validate"
    if [ "$mode" = strace ]; then
        strace -c -f -q -p "${pid[$c]}" -o "$bench_tmp/strace-$c.txt" &
    else
        perf record -g -q -o "$bench_tmp/perf-$c.data" -p "${pid[$c]}" 2>/dev/null &
    fi
    tracer=$!
    sleep 0.5
    read -r sent _ _ < <(drive "$url")
    kill -INT "$tracer"
    wait "$tracer" || true
    echo "== $c (${bin[$c]##*/}): $sent requests"
    # PROXY_KEEP=DIR: keep the raw strace/perf output there for a closer look
    [ -z "${PROXY_KEEP:-}" ] || cp "$bench_tmp"/*-"$c".* "$PROXY_KEEP"/
    if [ "$mode" = strace ]; then
        awk -v n="$sent" '$1 ~ /^[0-9.]+$/ && NF >= 5 {name = $NF; calls = $4
                  printf "%-16s %10d calls  %6.2f per request\n", name, calls, calls / n}' "$bench_tmp/strace-$c.txt"
    else
        perf report -i "$bench_tmp/perf-$c.data" --no-children --sort symbol --stdio 2>/dev/null |
            grep -E '^ +[0-9.]+%' | head -"${PROXY_PERF_TOP:-30}"
    fi
done
