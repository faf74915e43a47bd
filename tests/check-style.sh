#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The house rules a reader relies on (STYLE.md), checked over the whole tree of C sources in src/,
# include/, tests/ and bench/:
#   - formatting is the repo's .clang-format, to the byte (clang-format 14, as Debian 12 ships it);
#   - no line is longer than the column limit (clang-format cannot split every string or URL);
#   - no assignment inside an if/while/switch condition (curl's rule: `if ((x = f()) != 0)` hides
#     a side effect in a test);
#   - every .c file opens with its SPDX line and a comment saying what the file is for;
#   - no unbounded or unchecked libc calls (sprintf, strcpy, strcat, gets, strtok, atoi).
# Prints each offence as FILE:LINE and exits 1 if there is any.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

limit=$(sed -n 's/^ColumnLimit: *\([0-9]*\)/\1/p' .clang-format)
mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c' 'bench/*.h')
failed=0

echo "check-style: clang-format ($(clang-format --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'))"
for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
        echo "$f: not formatted as .clang-format says (run: clang-format -i $f)"
        failed=1
    fi
done

echo "check-style: lines of at most $limit columns"
if awk -v max="$limit" 'length($0) > max { printf "%s:%d: %d columns\n", FILENAME, FNR, length($0); bad = 1 }
                        END { exit bad ? 0 : 1 }' "${files[@]}"; then
    failed=1
fi

echo "check-style: no assignment inside a condition"
# Strings, character constants and comments are blanked first, then each if/while/switch
# condition (across lines, parentheses balanced) is searched for a lone '='.
if perl -0777 -ne '
    my $src = $_;
    my $text = $src;
    # One pass, so that "//" in a string is not a comment and a quote in a comment is not a string.
    $text =~ s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27}{
        my $m = $&; my $q = substr($m, 0, 1);
        ($q eq "\"" || $q eq "\x27") ? $q . (" " x (length($m) - 2)) . $q : do { (my $c = $m) =~ s/[^\n]/ /g; $c }
    }gse;
    while ($text =~ /\b(?:if|while|switch)\s*\(/g) {
        my $start = pos($text);
        my ($depth, $i) = (1, $start);
        while ($depth > 0 && $i < length($text)) {
            my $ch = substr($text, $i, 1);
            $depth++ if $ch eq "(";
            $depth-- if $ch eq ")";
            $i++;
        }
        my $cond = substr($text, $start, $i - $start - 1);
        if ($cond =~ /(?<![=!<>+\-*\/%&|^])=(?!=)/) {
            my $line = (substr($text, 0, $start) =~ tr/\n//) + 1;
            print "$ARGV:$line: assignment inside a condition\n";
            $found = 1;
        }
    }
    END { exit($found ? 0 : 1) }
' "${files[@]}"; then
    failed=1
fi

echo "check-style: every .c file says what it is for"
for f in "${files[@]}"; do
    case "$f" in *.c) ;; *) continue ;; esac
    if [ "$(sed -n 1p "$f")" != "/* SPDX-License-Identifier: Apache-2.0 */" ] ||
       ! sed -n 2p "$f" | grep -qE '^/\*'; then
        echo "$f:1: must open with the SPDX line and then a comment on the file's role"
        failed=1
    fi
done

echo "check-style: no unbounded or unchecked libc calls"
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|gets|strtok|atoi)\s*\(' "${files[@]}"; then
    echo "banned function used (see above; STYLE.md)"
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    echo "check-style: failed" >&2
    exit 1
fi
echo "check-style: ${#files[@]} files clean"
