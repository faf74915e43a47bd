#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Record-layer AEAD speed per backend on admitd's record sizes (see aead-speed.c): mbedTLS's own C
# code (Debian's prebuilt 3.6, PREBUILT_PREFIX), admitd's mbedTLS (OpenSSL under the _ALT hooks),
# OpenSSL's EVP and libsodium directly. Needs libssl-dev and libsodium-dev (the latter only here).
#   bench/aead/aead-speed.sh [PREBUILT_PREFIX]   (default: ../main/third_party/prefix if it is Debian's build)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
prebuilt=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc=(cc -O2 -Wall -Wextra -o)
"${cc[@]}" "$out/openssl" -DBACKEND_OPENSSL "$here/aead-speed.c" -lcrypto
"${cc[@]}" "$out/admitd" -DBACKEND_MBEDTLS -DMBEDTLS_FLAVOUR='"admitd(openssl-alt)"' -I"$root/third_party/prefix/include" \
    "$here/aead-speed.c" -L"$root/third_party/prefix/lib" -lmbedcrypto -lcrypto -pthread
bins=(admitd openssl)
if [ -n "$prebuilt" ] && [ -f "$prebuilt/lib/libmbedcrypto.a" ]; then
    "${cc[@]}" "$out/prebuilt" -DBACKEND_MBEDTLS -DMBEDTLS_FLAVOUR='"debian-prebuilt"' -I"$prebuilt/include" \
        "$here/aead-speed.c" -L"$prebuilt/lib" -lmbedcrypto -pthread
    bins+=(prebuilt)
fi
if [ -f /usr/include/sodium.h ]; then
    "${cc[@]}" "$out/sodium" -DBACKEND_SODIUM "$here/aead-speed.c" -lsodium
    bins+=(sodium)
fi
echo "# backend suite record-bytes MB/s(sealed+opened) ns/record"
for b in "${bins[@]}"; do "$out/$b"; done
