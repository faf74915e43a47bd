#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Gets everything admitd needs to build, test and benchmark on Debian 12 (bookworm), and nothing from
# anywhere but Debian's archive. Idempotent: a second run checks and returns in about a second.
#
#   third_party/deps.sh            install/verify
#   third_party/deps.sh --refresh  forget the local prefix and take the newest allowed versions again
#
# bookworm lacks llhttp and yyjson and only has mbedTLS 2.28 (no TLS 1.3 server), so those three come
# from Debian 13 (trixie) through a private apt configuration under third_party/cache/ that leaves the
# system's apt setup untouched:
#   llhttp 9.x   trixie binary libllhttp-dev, static archive unpacked (no C source is reachable)
#   mbedTLS 3.6  trixie source tarball, built with admitd's configuration (third_party/mbedtls/:
#                only what admitd uses) and its AES-GCM and ChaCha20-Poly1305 on OpenSSL's libcrypto
#                (bookworm libssl-dev) through the _ALT hooks: 4-10x mbedTLS's own code (bench/RESULTS.md)
#   yyjson 0.10+ trixie source tarball, its single yyjson.c compiled here
# Everything lands in third_party/prefix/{include,lib,lib/pkgconfig} with relocatable .pc files; what
# was taken (versions and SHA-256) is written to third_party/deps.lock.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix="$here/prefix"
cache="$here/cache"
lock="$here/deps.lock"
stamp="$prefix/.complete"
recipe_version=6   # bump when the recipe changes so old prefixes are rebuilt
# ... and a change to admitd's mbedTLS configuration or AEAD modules rebuilds it too.
recipe_version="$recipe_version $(cat "$here"/mbedtls/* | sha256sum | cut -c1-16)"

# bookworm packages: build tools, the libraries bookworm has, and what tests and benchmarks run.
apt_packages=(build-essential cmake ninja-build pkg-config clang llvm libclang-rt-14-dev clang-format
              libuv1-dev libssl-dev libyaml-dev libcmocka-dev valgrind wrk nginx-light curl ca-certificates
              openssl xz-utils debian-archive-keyring util-linux
              golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev)

step=""
die() { echo "deps.sh: $step failed: $*" >&2; exit 1; }
trap 'rc=$?; [ $rc -ne 0 ] && [ -n "$step" ] && echo "deps.sh: failed during: $step (exit $rc)" >&2' EXIT
say() { echo "deps.sh: $*"; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "need root (or sudo) to run: $*"; fi
}

if [ "${1:-}" = "--refresh" ]; then rm -rf "$prefix" "$cache"; fi

step="checking the OS"
. /etc/os-release 2>/dev/null || die "no /etc/os-release"
[ "${ID:-}" = debian ] || die "this recipe is for Debian 12 (found ${PRETTY_NAME:-unknown})"

step="installing bookworm packages"
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q >/dev/null
    # nginx-light would start a system nginx on :80; benchmarks run their own instance instead.
    as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
    if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable --now nginx >/dev/null 2>&1 || true; fi
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe_version" ]; then
    say "up to date ($(cut -d' ' -f1,2 "$lock" | tr '\n' ' ' | sed 's/ *$//'))"
    step=""; exit 0
fi

step="setting up the private trixie apt configuration"
mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/work"
mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -m1 -E '^https?://[^ ]*/debian/$' || true)
[ -n "$mirror" ] || mirror="http://deb.debian.org/debian/"
security=${mirror%/debian/}/debian-security/
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "missing $keyring (package debian-archive-keyring)"
cat > "$cache/sources.list" <<SRC
deb [signed-by=$keyring] $mirror trixie main
deb-src [signed-by=$keyring] $mirror trixie main
deb [signed-by=$keyring] $security trixie-security main
SRC
apt_opts=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
          -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache" -o Dir::State::status=/var/lib/dpkg/status
          -o APT::Sandbox::User=root -q)
apt-get "${apt_opts[@]}" update >/dev/null || die "apt-get update of trixie indexes from $mirror"

# uri_of KIND NAME PATTERN -> "URI FILE SHA256" of the first --print-uris line whose file matches
uri_of() {
    local kind=$1 name=$2 pattern=$3 line
    if [ "$kind" = bin ]; then line=$(cd "$cache/work" && apt-get "${apt_opts[@]}" download --print-uris "$name" 2>/dev/null | grep -E "$pattern" | head -1)
    else line=$(cd "$cache/work" && apt-get "${apt_opts[@]}" source --print-uris "$name" 2>/dev/null | grep -E "$pattern" | head -1); fi
    [ -n "$line" ] || die "trixie has no $name matching $pattern"
    # 'URI' FILE SIZE SHA256:xxx
    echo "$line" | awk '{gsub("\x27","",$1); sub("SHA256:","",$4); print $1, $2, $4}'
}
fetch() { # URI FILE SHA256
    local dest="$cache/archives/$2"
    if [ ! -f "$dest" ] || [ "$(sha256sum "$dest" | cut -d' ' -f1)" != "$3" ]; then
        /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$1" "$dest" "SHA256:$3" >/dev/null 2>&1 \
            || die "download of $1"
    fi
    echo "$dest"
}
version_of() { echo "$1" | sed -E 's/^[^_]+_([^_]+)(_.*|\.orig.*)$/\1/; s/%7e/~/g; s/%2b/+/g'; }

rm -rf "$prefix.new"; mkdir -p "$prefix.new/include" "$prefix.new/lib/pkgconfig"
: > "$lock.new"

step="getting llhttp 9.x (trixie libllhttp-dev)"
read -r uri file sha < <(uri_of bin libllhttp-dev 'libllhttp-dev_9\.')
deb=$(fetch "$uri" "$file" "$sha")
rm -rf "$cache/work/llhttp"; dpkg-deb -x "$deb" "$cache/work/llhttp"
cp "$cache/work/llhttp/usr/include/llhttp.h" "$prefix.new/include/"
cp "$cache/work/llhttp"/usr/lib/*/libllhttp.a "$prefix.new/lib/"
v=$(version_of "$file"); v=${v%%~*}
echo "llhttp $v $file sha256:$sha" >> "$lock.new"
cat > "$prefix.new/lib/pkgconfig/libllhttp.pc" <<PC
prefix=\${pcfiledir}/../..
Name: libllhttp
Description: llhttp HTTP parser (static, from Debian trixie libllhttp-dev)
Version: $v
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -lllhttp
PC

step="building mbedTLS 3.6 (trixie source tarball, admitd's configuration)"
read -r uri file sha < <(uri_of src mbedtls 'mbedtls_3\.6\.[0-9]+\.orig\.tar')
tarball=$(fetch "$uri" "$file" "$sha")
v=$(version_of "$file")
src="$cache/work/mbedtls"
rm -rf "$src"; mkdir -p "$src"
tar xf "$tarball" -C "$src" --strip-components=1
# Our configuration replaces the default one (so admitd compiles against the options the library was
# built with), and the AES-GCM and ChaCha20-Poly1305 contexts come from OpenSSL (aead_openssl.c).
cp "$here/mbedtls/mbedtls_config.h" "$here/mbedtls/gcm_alt.h" "$here/mbedtls/chachapoly_alt.h" "$src/include/mbedtls/"
# Only the three libraries: no programs, no tests, no generated-file tooling (the tarball ships them).
make -C "$src/library" -j"$(nproc)" CFLAGS="-O2 -fPIC" libmbedcrypto.a libmbedx509.a libmbedtls.a \
    >"$cache/work/mbedtls-build.log" 2>&1 || { tail -20 "$cache/work/mbedtls-build.log" >&2; die "make (log above)"; }
cc -O2 -fPIC -Wall -Wextra -Werror -I"$src/include" -I"$src/library" -c "$here/mbedtls/aead_openssl.c" \
    -o "$src/library/aead_openssl.o" || die "compiling aead_openssl.c"
ar rs "$src/library/libmbedcrypto.a" "$src/library/aead_openssl.o" 2>/dev/null
cp -r "$src/include/mbedtls" "$src/include/psa" "$prefix.new/include/"
cp "$src"/library/lib{mbedcrypto,mbedx509,mbedtls}.a "$prefix.new/lib/"
echo "mbedtls $v $file sha256:$sha" >> "$lock.new"
for pc in mbedcrypto:libcrypto mbedx509:mbedcrypto mbedtls:mbedx509; do
    name=${pc%%:*}; req=${pc#*:}
    cat > "$prefix.new/lib/pkgconfig/$name.pc" <<PC
prefix=\${pcfiledir}/../..
Name: $name
Description: Mbed TLS $v ($name, static, built by third_party/deps.sh with admitd's configuration)
Version: $v
Requires: $req
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -l$name$( [ "$name" = mbedcrypto ] && echo " -pthread")
PC
done

step="building yyjson (trixie source tarball)"
read -r uri file sha < <(uri_of src yyjson 'yyjson_[0-9.]+(\+ds)?\.orig\.tar')
tarball=$(fetch "$uri" "$file" "$sha")
v=$(version_of "$file"); v=${v%%+*}
case "$v" in 0.[0-9].*) die "yyjson $v is older than 0.10";; esac
rm -rf "$cache/work/yyjson"; mkdir -p "$cache/work/yyjson"
tar xf "$tarball" -C "$cache/work/yyjson" --strip-components=1
cc -O2 -fPIC -c "$cache/work/yyjson/src/yyjson.c" -o "$cache/work/yyjson/yyjson.o" || die "compiling yyjson.c"
ar rcs "$prefix.new/lib/libyyjson.a" "$cache/work/yyjson/yyjson.o"
cp "$cache/work/yyjson/src/yyjson.h" "$prefix.new/include/"
# Fuzz and sanitizer builds compile yyjson.c themselves so it is instrumented too.
mkdir -p "$prefix.new/src"; cp "$cache/work/yyjson/src/yyjson.c" "$prefix.new/src/"
echo "yyjson $v $file sha256:$sha" >> "$lock.new"
cat > "$prefix.new/lib/pkgconfig/yyjson.pc" <<PC
prefix=\${pcfiledir}/../..
Name: yyjson
Description: yyjson JSON library (static, built by third_party/deps.sh)
Version: $v
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -lyyjson
PC

step="installing the prefix"
rm -rf "$prefix"; mv "$prefix.new" "$prefix"; mv "$lock.new" "$lock"
echo "$recipe_version" > "$stamp"
say "done: $(cut -d' ' -f1,2 "$lock" | tr '\n' ' ' | sed 's/ *$//')"
step=""
