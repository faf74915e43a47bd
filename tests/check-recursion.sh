#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# No code path may recurse without bound (INTERFACE.md, "Malformed input"): input nests as deep as
# a client likes, and a walker that follows it down the C stack ends the process. This check builds
# the call graph of src/ with gcc's -fcallgraph-info and fails on every function that can call
# itself, directly or through others, unless tests/recursion-allowed.txt names it together with
# what bounds it. Run after third_party/deps.sh (it needs the dependency headers).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for src in $(find src -name '*.c' | sort); do
    obj="$work/$(echo "$src" | tr '/' '_').o"
    gcc -std=c11 -D_GNU_SOURCE -DADM_VERSION='"check"' -Iinclude -isystem third_party/prefix/include \
        -O0 -fcallgraph-info -c "$src" -o "$obj" -dumpdir "$work/"
done

# "caller callee" per line; static functions are named file:function.
cat "$work"/*.ci | sed -n 's/^edge: { sourcename: "\([^"]*\)" targetname: "\([^"]*\)".*/\1 \2/p' | sort -u \
    > "$work/edges"

# A function is recursive when it can reach itself: a search from each caller (a few thousand
# edges, well under a second in awk).
awk '
    { succ[$1] = succ[$1] " " $2; nodes[$1] = 1 }
    END {
        for (v in nodes) {
            delete seen
            n = split(succ[v], queue, " ")
            head = 1
            while (head <= n) {
                w = queue[head++]
                if (w == v) { print v; break }
                if (w in seen) { continue }
                seen[w] = 1
                m = split(succ[w], next_, " ")
                for (k = 1; k <= m; k++) { queue[++n] = next_[k] }
            }
        }
    }' "$work/edges" | sort -u > "$work/recursive"

sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tests/recursion-allowed.txt | awk '{ print $1 }' | sort -u \
    > "$work/allowed"

unexpected=$(comm -23 "$work/recursive" "$work/allowed")
if [ -n "$unexpected" ]; then
    echo "check-recursion: these functions can recurse, and tests/recursion-allowed.txt does not say what bounds them:" >&2
    echo "$unexpected" | sed 's/^/  /' >&2
    exit 1
fi
stale=$(comm -13 "$work/recursive" "$work/allowed")
if [ -n "$stale" ]; then
    echo "check-recursion: no longer recursive, remove from tests/recursion-allowed.txt:" >&2
    echo "$stale" | sed 's/^/  /' >&2
    exit 1
fi
echo "check-recursion: $(wc -l < "$work/recursive") functions on call cycles, each bounded (tests/recursion-allowed.txt)"
