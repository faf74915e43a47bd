#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the whole test suite: installs/verifies dependencies, builds, runs every unit and
# integration test under ctest.
#
#   tests/run.sh          gcc, RelWithDebInfo, build dir build-test/
#   tests/run.sh --asan   clang, AddressSanitizer + UndefinedBehaviorSanitizer, build dir build-asan/
#
# Extra arguments after the mode go to ctest (e.g. tests/run.sh -L unit).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mode=default
if [ "${1:-}" = "--asan" ]; then mode=asan; shift; fi

third_party/deps.sh

if [ "$mode" = asan ]; then
    dir=build-asan
    CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=ASAN >/dev/null
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
    dir=build-test
    CC=gcc cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$dir"
ctest --test-dir "$dir" --output-on-failure -j2 "$@"
