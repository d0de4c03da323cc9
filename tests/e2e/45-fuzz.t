#!/bin/sh
# A short fuzz pass as TAP: builds the libFuzzer targets with `make fuzz`
# and runs each tests/fuzz/*_fuzz.c target for LB_FUZZ_SECONDS (default: a
# budget of 48 s shared by the targets, at least 3 s each; LB_FUZZ_SECONDS=N
# for longer runs)
# over its seed corpus (tests/fuzz/corpus/<name>/), with the dictionary
# tests/fuzz/<name>.dict when there is one. Skips without clang and
# in the sanitizer pass; a target that does not build is a failure. LB_FUZZ_NOBUILD=1
# runs the binaries already in build-fuzz/fuzz/.
cd "$(dirname "$0")/../.." || exit 1

if ! command -v clang >/dev/null 2>&1; then
    echo "1..0 # SKIP clang not present"
    exit 0
fi
if [ "${LB_SAN:-0}" = 1 ]; then
    echo "1..0 # SKIP the fuzz targets are sanitized builds already; run once, in the release pass"
    exit 0
fi
log=$(mktemp)
if [ -z "$LB_FUZZ_NOBUILD" ] && ! make fuzz >"$log" 2>&1; then
    echo "1..1"
    echo "not ok 1 - make fuzz builds the targets"
    grep 'error' "$log" | head -20 | sed 's/^/# /'
    rm -f "$log"
    exit 1
fi
rm -f "$log"

targets=$(for f in tests/fuzz/*_fuzz.c; do basename "$f" .c; done)
n=$(echo "$targets" | wc -w)
secs=${LB_FUZZ_SECONDS:-$(( 48 / n > 3 ? 48 / n : 3 ))}
echo "1..$n"
i=0
for t in $targets; do
    i=$((i + 1))
    work=$(mktemp -d)
    seeds=tests/fuzz/corpus/${t%_fuzz}
    [ -d "$seeds" ] || seeds=
    dict=tests/fuzz/${t%_fuzz}.dict # the grammar's words, when the target has some
    [ -f "$dict" ] && dict=-dict=$dict || dict=
    if build-fuzz/fuzz/"$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$work/" $dict "$work" $seeds >"$work/log" 2>&1; then
        echo "ok $i - $t: ${secs}s without a crash, leak or sanitizer report"
    else
        echo "not ok $i - $t"
        tail -40 "$work/log" | sed 's/^/# /'
        for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
            [ -f "$a" ] && echo "# reproducer (base64): $(base64 -w0 "$a" | cut -c1-2000)"
        done
    fi
    rm -rf "$work"
done
