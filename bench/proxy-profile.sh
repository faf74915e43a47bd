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
#   bench/proxy-profile.sh strace|perf|cpu|faults|callgrind [SECONDS=6] [RATE=2000]
#   PROXY_BEFORE=56ae902 bench/proxy-profile.sh strace
#   PROXY_KEEP=DIR bench/proxy-profile.sh perf     keeps perf-*.data / strace-*.txt / callgrind-* in DIR
# "cpu" attaches nothing and prints admitd's own CPU time per request (/proc schedstat) and the latency
# overhead over admitd-bench straight at the mockhook (`direct`), medians of PROXY_ROUNDS
# (default 3) rounds alternating direct, before (when given) and after.
# "faults" prints admitd's page faults (minflt) and voluntary context switches (wake-ups) per request,
# the same rounds, counted inside each run once its 64 connections are up: neither depends much on the
# machine's load.
# "callgrind" runs each admitd under valgrind --tool=callgrind driven by admitd-bench closed loop on
# 2 connections, counts SECONDS (default 15 there) of warm requests (connections up, handshakes
# done) and prints instructions per proxied request and the calls per request of malloc, calloc,
# realloc, free, uv_timer_start/stop and uv_try_write/uv_write: the CPU cost without the load.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
mode=${1:-strace}
secs=${2:-6}
rate=${3:-2000}
rounds=${PROXY_ROUNDS:-3}
review="$bench_root/bench/reviews/pod-4k.v1.json"
# PROXY_RT=PRIO: the mockhook, admitd and admitd-bench under SCHED_FIFO PRIO (see bench/proxy.sh)
rt=()
[ -n "${PROXY_RT:-}" ] && rt=(chrt -f "$PROXY_RT")
case "$mode" in strace | perf | cpu | faults | callgrind) ;;
*) echo "mode: strace, perf, cpu, faults or callgrind" >&2; exit 2 ;;
esac

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
"${rt[@]}" taskset -c "$CLIENT_CPU" "$MOCK" --tls-cert-file "$bench_tmp/cert.pem" --tls-private-key-file "$bench_tmp/key.pem" \
    --listen "127.0.0.1:$base" --behavior allow --delay 0ms 2>"$bench_tmp/mock.log" &
bench_pids+=($!)
wait_port "$base"
# admitd's files in a folder of their own: admitd watches the folders of its files, and perf and
# callgrind write theirs into $bench_tmp while it runs
mkdir -p "$bench_tmp/conf"
cp "$bench_tmp/cert.pem" "$bench_tmp/key.pem" "$bench_tmp/conf/"
webhook_yaml ValidatingWebhookConfiguration v1 v0.proxy-bench.example "https://127.0.0.1:$base/v" \
    > "$bench_tmp/conf/v1.yaml"
admitd_args=(--tls-cert-file "$bench_tmp/conf/cert.pem" --tls-private-key-file "$bench_tmp/conf/key.pem"
             --webhook-config "$bench_tmp/conf/v1.yaml" --shutdown-delay 0s
             --cluster-state "$bench_root/tests/fixtures/cluster-state.yaml")
# PROXY_ADMITD_ARGS: more admitd flags, e.g. "--metrics-listen 127.0.0.1:0" (the decision trace of
# /debug/requests is then rendered for every request, as in a deployment that serves metrics)
read -ra extra_args <<< "${PROXY_ADMITD_ARGS:-}"
admitd_args+=("${extra_args[@]}")

if [ "$mode" = callgrind ]; then
    # count_calls FILE: "name calls" lines for the functions of interest, and "Ir total", from a
    # callgrind dump (names are compressed: "(id) name" the first time, "(id)" after)
    count_calls() {
        awk 'function nameof(s,   id, rest) {
                 if (match(s, /^\([0-9]+\)/)) { id = substr(s, RSTART, RLENGTH); rest = substr(s, RLENGTH + 2)
                     if (rest != "") nm[id] = rest; return nm[id] }
                 return s }
             /^(summary|totals):/ { tot = $2 }
             /^fn=/ { s = $0; sub(/^fn=/, "", s); nameof(s) }
             /^cfn=/ { s = $0; sub(/^cfn=/, "", s); cur = nameof(s) }
             /^calls=/ { split($0, a, /[= ]/); n[cur] += a[2] }
             END { print "Ir", tot
                   split("mbedtls_ssl_write malloc calloc realloc free uv_timer_start uv_timer_stop uv_try_write uv_write", k, " ")
                   for (i in k) print k[i], n[k[i]] + 0 }' "$1"
    }
    window=${PROXY_CG_SECONDS:-15}
    echo "admitd under callgrind, admitd-bench closed loop on 2 connections, ${window}s of warm requests each"
    p=$((base + 1))
    for c in "${contenders[@]}"; do
        out="$bench_tmp/callgrind-$c"
        valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no --collect-jumps=no \
            "${bin[$c]}" --listen "127.0.0.1:$p" "${admitd_args[@]}" 2>"$bench_tmp/admitd-$c.log" &
        vg=$!
        bench_pids+=($vg)
        wait_port "$p"
        taskset -c "$CLIENT_CPU" "$BENCH" --url "https://127.0.0.1:$p/validate" --cacert "$bench_tmp/cert.pem" \
            --review "$review" --closed --connections 2 --duration 3600s --timeout 60s > /dev/null 2>&1 &
        drv=$!
        bench_pids+=($drv)
        sleep "${PROXY_CG_WARM:-10}" # handshakes done, the upstream connection up (valgrind is ~50x slower)
        callgrind_control -z "$vg" > /dev/null
        sleep "$window"
        callgrind_control -d "$vg" > /dev/null
        kill "$drv" 2>/dev/null || true
        sleep 1
        kill "$vg" 2>/dev/null || true
        wait "$vg" 2>/dev/null || true
        dump=$(ls -t "$out".* | head -1)
        # each proxied request is two mbedtls_ssl_write calls of one record: its answer and its call
        count_calls "$dump" | awk -v c="$c" -v rev="${bin[$c]##*/}" '{v[$1] = $2}
            END { n = v["mbedtls_ssl_write"] / 2
                  printf "== %s (%s): %d requests, %.0f instructions per request\n", c, rev, n, v["Ir"] / n
                  printf "   per request: malloc %.2f, calloc %.2f, realloc %.2f, free %.2f, uv_timer_start %.2f,", v["malloc"] / n, v["calloc"] / n, v["realloc"] / n, v["free"] / n, v["uv_timer_start"] / n
                  printf " uv_timer_stop %.2f, uv_try_write %.2f, uv_write %.2f\n", v["uv_timer_stop"] / n, v["uv_try_write"] / n, v["uv_write"] / n }'
        [ -z "${PROXY_KEEP:-}" ] || cp "$dump" "$PROXY_KEEP/"
        p=$((p + 1))
    done
    exit 0
fi

declare -A pid port
p=$((base + 1))
for c in "${contenders[@]}"; do
    "${rt[@]}" taskset -c "$SERVER_CPU" "${bin[$c]}" --listen "127.0.0.1:$p" "${admitd_args[@]}" 2>"$bench_tmp/admitd-$c.log" &
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
    "${rt[@]}" taskset -c "$CLIENT_CPU" "$BENCH" --url "$1" --cacert "$bench_tmp/cert.pem" --review "$review" \
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
if [ "$mode" = faults ]; then
    # minflt and voluntary context switches of PID, and the time in ns
    counters() { echo "$(sed 's/^.*) //' "/proc/$1/stat" | awk '{print $8}') $(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status") $(date +%s%N)"; }
    # Counted inside one run, from 2 s after its start (its 64 connections up) to 1 s before its end;
    # requests in that window = RATE x its length (open loop).
    echo "round  contender  minflt_per_request  wakeups_per_request"
    for r in $(seq 1 "$rounds"); do
        for c in "${contenders[@]}"; do
            url="https://127.0.0.1:${port[$c]}/validate"
            secs=$((secs < 4 ? 4 : secs)) drive "$url" > /dev/null &
            drv=$!
            sleep 2
            read -r f0 w0 t0 < <(counters "${pid[$c]}")
            sleep $((secs < 4 ? 1 : secs - 3))
            read -r f1 w1 t1 < <(counters "${pid[$c]}")
            wait "$drv"
            awk -v r="$r" -v c="$c" -v n="$(awk -v t=$((t1 - t0)) -v rate="$rate" 'BEGIN {print t / 1e9 * rate}')" \
                -v f=$((f1 - f0)) -v w=$((w1 - w0)) 'BEGIN {printf "%s  %s  %.4f  %.3f\n", r, c, f / n, w / n}'
        done
    done
    exit 0
fi
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
