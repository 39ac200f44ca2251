#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fails when a libFuzzer target sees too little of the code it fuzzes: a
# target linked against an uninstrumented parser still runs, finds nothing
# and passes its timed run (fuzz_ldcache did, at 6 covered edges), so the
# timed run alone cannot tell a blind target from a clean one.  This runs the
# target over a copy of its seed corpus for a fixed number of inputs with a
# fixed seed (a count, not a time: the figure does not depend on the
# machine's speed) and compares the coverage libFuzzer reports on its DONE
# line with a floor set per target in meson.build.
#   check-cov.sh EXE CORPUS RUNS FLOOR
set -eu
exe=$(realpath "$1") corpus=$(realpath -m "$2") runs=$3 floor=$4
name=$(basename "$exe")
[ -d "$corpus" ] || { echo "FAIL: $name: no seed corpus $corpus"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp -r "$corpus/." "$work/corpus/"
cd "$work"
# libFuzzer exits 77 on a crash by default, which meson reads as a skip.
rc=0
"$exe" -runs="$runs" -seed=1 -timeout=10 -rss_limit_mb=2048 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="$work/" corpus >log 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	tail -n 40 log
	echo "FAIL: $name exited $rc on its seed corpus"
	exit 1
fi

# "INFO: Loaded 1 modules   (661 inline 8-bit counters): ..." and
# "#2000	DONE   cov: 327 ft: 1045 corp: ...": the instrumented edges and
# how many of them the inputs reached.
counters=$(sed -n 's/^INFO: Loaded .*(\([0-9]*\) inline 8-bit counters).*/\1/p' log | head -n 1)
inited=$(sed -n 's/^#[0-9]*[[:space:]]*INITED cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p' log)
done_line=$(sed -n 's/^#\([0-9]*\)[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \2 \3/p' log)
if [ -z "$counters" ] || [ -z "$done_line" ]; then
	tail -n 40 log
	echo "FAIL: $name: no counter or DONE line in libFuzzer's output"
	exit 1
fi
read -r n cov ft <<EOF
$done_line
EOF
echo "$name: $counters counters; seed corpus: ${inited:-no INITED line}; after $n runs: cov $cov ft $ft; floor cov $floor"
if [ "$cov" -lt "$floor" ]; then
	echo "FAIL: $name covers $cov edges, below its floor of $floor: is the code it fuzzes built with -fsanitize=fuzzer-no-link?"
	exit 1
fi
echo "PASS: $name cov $cov >= $floor"
