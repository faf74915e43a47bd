#!/usr/bin/env bash
# Build the benchmark peers: a minimal Go standard-library webhook (go-webhook/).
#
#   bench/peers/build.sh [OUT_DIR]     (default: bench/peers/out)
#
# Installs Debian's golang-go with apt-get when `go` is missing (sudo when not root), then builds
# OUT_DIR/go-webhook. GOCACHE, GOPATH and GOMODCACHE live under OUT_DIR so nothing is written to
# $HOME, and GOPROXY=off / GOFLAGS=-mod=mod are unnecessary: the module has no dependencies.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if ! command -v go >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    echo "build.sh: go not found; installing golang-go with apt-get" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends golang-go
fi

export GOCACHE="$out/.gocache"
export GOPATH="$out/.gopath"
export GOMODCACHE="$out/.gopath/pkg/mod"
export GOTOOLCHAIN=local   # never try to download a newer toolchain (Go >= 1.21)
export GOPROXY=off         # standard library only: nothing to fetch
export GOFLAGS=
export CGO_ENABLED=0

go version
cd "$here/go-webhook"
go vet .
go build -trimpath -o "$out/go-webhook" .
echo "build.sh: built $out/go-webhook"
