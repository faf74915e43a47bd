#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Assembles the container image's whole runtime root in OUT_DIR: the static admitd and the few
# files it reads at run time, nothing else (no shell, no libc, no package manager):
#   /usr/local/bin/admitd            one static executable (cmake -DADM_STATIC=ON)
#   /etc/ssl/certs/ca-certificates.crt  system CAs, for downstream webhooks without a caBundle
#   /etc/passwd, /etc/group          the nonroot user 65532 the image runs as
#   /etc/nsswitch.conf, /etc/hosts   how the static resolver looks names up (files, then DNS)
#   /tmp                             empty, mode 1777 (nothing writes there; some tools expect it)
# The Containerfile copies OUT_DIR into a scratch image; tests/image/payload-test.sh runs admitd in
# it with chroot to prove nothing is missing.
#
#   deploy/payload.sh OUT_DIR ADMITD_BIN
set -euo pipefail
out=$1
bin=$2

if ldd "$bin" >/dev/null 2>&1; then
    echo "payload.sh: $bin is not a static executable (build with -DADM_STATIC=ON)" >&2
    exit 1
fi
[ -f /etc/ssl/certs/ca-certificates.crt ] || { echo "payload.sh: no /etc/ssl/certs/ca-certificates.crt (install ca-certificates)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/usr/local/bin" "$out/etc/ssl/certs" "$out/tmp"
chmod 1777 "$out/tmp"
install -m 0755 "$bin" "$out/usr/local/bin/admitd"
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$out/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$out/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$out/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$out/etc/nsswitch.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$out/etc/hosts"
