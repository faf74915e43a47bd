#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# admitd under valgrind: serve AdmissionReviews over TLS to curl (an OpenSSL client, so this also
# checks interoperability), including bad input, then SIGTERM. Passes when admitd exits 0 with no
# leak and no memory error.
#   valgrind-shutdown.sh ADMITD_BIN FIXTURES_DIR
set -euo pipefail
bin=$1
fixtures=$2
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 \
    "$bin" --listen 127.0.0.1:0 --self-signed-ca-out "$dir/ca.pem" --shutdown-delay 0s \
    --cluster-state "$fixtures/cluster-state.yaml" 2>"$dir/log" &
pid=$!

port=
for _ in $(seq 1 600); do # valgrind starts slowly: up to 60 s
    port=$(sed -n 's/.*serving admission on 127\.0\.0\.1:\([0-9]*\) (https).*/\1/p' "$dir/log")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/log"; echo "admitd exited early" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { cat "$dir/log"; echo "admitd did not start" >&2; exit 1; }

url="https://127.0.0.1:$port"
ok() { curl -sS --max-time 30 --cacert "$dir/ca.pem" -H 'Content-Type: application/json' "$@"; }
for v in v1 v1beta1; do
    out=$(ok --data-binary @"$fixtures/pod-create.$v.review.json" "$url/validate")
    uid=$(grep -o '"uid":"[^"]*"' "$fixtures/pod-create.$v.review.json" | head -1 | cut -d'"' -f4)
    case "$out" in *"\"uid\":\"$uid\""*'"allowed":true'*) ;; *) echo "bad answer for $v: $out" >&2; exit 1;; esac
done
# several requests on one kept-alive connection, including errors
code=$(ok -o /dev/null -w '%{http_code} ' --data-binary 'not json' "$url/validate" \
       --next --cacert "$dir/ca.pem" -o /dev/null -w '%{http_code} ' "$url/healthz" \
       --next --cacert "$dir/ca.pem" -o /dev/null -w '%{http_code} ' "$url/nope" \
       --next --cacert "$dir/ca.pem" -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
              --data-binary @"$fixtures/pod-update.v1.review.json" "$url/admit")
[ "$code" = "400 200 404 200" ] || { echo "unexpected codes: $code" >&2; exit 1; }

kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=
if [ "$rc" -ne 0 ]; then
    cat "$dir/log"
    echo "admitd exited $rc under valgrind (99: valgrind found errors or leaks)" >&2
    exit 1
fi
echo "valgrind: clean shutdown, no leaks, no errors"
