#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The container image's runtime payload is complete: no registry is reachable here to pull a base
# image, so instead of building the image this builds a static admitd (-DADM_STATIC=ON), assembles
# exactly the root the Containerfile copies (deploy/payload.sh), and runs admitd in it with chroot,
# as the image's user 65532, on a read-only bind mount of that root (readOnlyRootFilesystem): it
# must serve TLS from mounted files, load a webhook configuration, resolve "localhost" through the
# root's own /etc/hosts, call a real admitd-mockhook over TLS, answer its denial, report ready, and
# exit 0 on SIGTERM.
#
#   tests/image/payload-test.sh SOURCE_DIR WORK_DIR MOCKHOOK_BIN FIXTURES_DIR
set -euo pipefail
src=$1
work=$2
mockhook=$3
fixtures=$4

fail() { echo "payload-test: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ] && ! unshare -r true 2>/dev/null; then
    echo "payload-test: needs root or user namespaces for chroot"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
mkdir -p "$work"
CC=gcc cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADM_STATIC=ON \
    -DADM_BUILD_TESTS=OFF >/dev/null
cmake --build "$work/build" --target admitd >/dev/null
root="$work/root"
"$src/deploy/payload.sh" "$root" "$work/build/admitd"
echo "payload-test: payload: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"

mkdir -p "$root/etc/admitd/tls" "$root/etc/admitd/webhooks"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$root/etc/admitd/tls/tls.key" -out "$root/etc/admitd/tls/tls.crt" 2>/dev/null
chmod 0644 "$root/etc/admitd/tls/tls.key" # the image's user reads what the pod mounts

port_of() { grep -o "serving $1 on 127.0.0.1:[0-9]*" "$2" | head -1 | sed 's/.*://'; }
wait_for() { # FILE PATTERN PID
    for _ in $(seq 200); do
        grep -q "$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

"$mockhook" --listen 127.0.0.1:0 --self-signed-ca-out "$work/mock-ca.pem" --route /deny=deny:nope \
    >"$work/mock.log" 2>&1 &
mock=$!
rm -f "$work/admitd.pid"
# whatever fails, nothing started here outlives the test
cleanup() {
    set +e
    kill "$mock" 2>/dev/null
    [ -f "$work/admitd.pid" ] && kill "$(cat "$work/admitd.pid")" 2>/dev/null
    return 0
}
trap cleanup EXIT
wait_for "$work/mock.log" "serving admission on" "$mock" || fail "the mockhook did not start"
cat >"$root/etc/admitd/webhooks/hooks.yaml" <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: payload}
webhooks:
- name: deny.payload.example.com
  clientConfig:
    url: https://localhost:$(port_of admission "$work/mock.log")/deny
    caBundle: $(base64 -w0 "$work/mock-ca.pem")
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
  sideEffects: None
  admissionReviewVersions: [v1]
YAML

# the namespaces and service accounts the fixture review names, for the default plugins
mkdir -p "$root/etc/admitd/cluster"
cp "$fixtures/cluster-state.yaml" "$root/etc/admitd/cluster/state.yaml"

log="$work/admitd.log"
run_admitd=(/usr/local/bin/admitd --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --shutdown-delay 0s
    --tls-cert-file /etc/admitd/tls/tls.crt --tls-private-key-file /etc/admitd/tls/tls.key
    --webhook-config /etc/admitd/webhooks --cluster-state /etc/admitd/cluster)
# a private mount namespace: the root bound read-only onto itself, then chroot as 65532
# (a probe write must fail there, or admitd is not started)
unshare --mount --fork sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
    ! touch "$1/tmp/probe" 2>/dev/null && echo $$ >"$2" &&
    shift 2 && exec chroot --userspec=65532:65532 "$@"' sh "$root" "$work/admitd.pid" "$root" "${run_admitd[@]}" \
    >"$log" 2>&1 &
runner=$!
wait_for "$log" "admitd [0-9.]* ready" "$runner" || { cat "$log" >&2; fail "admitd did not start in its root"; }
pid=$(cat "$work/admitd.pid")
port=$(port_of admission "$log")
health=$(port_of health "$log")
[ "$(curl -s "http://127.0.0.1:$health/readyz")" = ok ] || fail "/readyz is not ok"
answer=$(curl -s --cacert "$root/etc/admitd/tls/tls.crt" -H 'Content-Type: application/json' \
    --data-binary @"$fixtures/pod-create.v1.review.json" "https://localhost:$port/validate")
case "$answer" in
*'admission webhook \"deny.payload.example.com\" denied the request: nope'*) ;;
*) cat "$log" >&2; fail "the webhook call from inside the root did not come back: $answer" ;;
esac
kill -TERM "$pid"
wait "$runner" || { cat "$log" >&2; fail "admitd did not exit 0 on SIGTERM"; }
echo "payload-test: ok: static admitd ($(stat -c %s "$root/usr/local/bin/admitd") bytes) served, called a webhook by name, exited 0 in a read-only root holding only the payload"
