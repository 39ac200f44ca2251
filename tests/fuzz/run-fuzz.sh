#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs a libFuzzer target for a bounded time over a copy of its seed corpus
# (the repository's corpus is never written to); any crash, leak or
# sanitizer report makes libFuzzer exit non-zero and the test fail.  libFuzzer
# exits 77 on a crash by default, which meson reads as a skip: hence
# -error_exitcode=1.
set -eu
exe=$(realpath "$1") corpus=$(realpath -m "$2") seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
[ -d "$corpus" ] && cp -r "$corpus/." "$work/corpus/"
cd "$work"
"$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="$work/" corpus
