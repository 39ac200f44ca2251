#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a fresh Debian 12 machine: install what the build needs,
# build shstk-policy, scan this machine's binaries into the default SQLite
# database and print the report.
#   ./scripts/main.sh [shstkctl scan arguments...]
# Environment: BUILD_DIR (default ./build), SHSTK_DB (default: shstkctl's
# default, /var/lib/shstk-policy/shstk.db for root).
#
# Each preparing step writes its output to a log of its own; a step that
# fails names itself and its log and shows the log's end, and main.sh exits
# with its status.  The build is configured without the tests
# (-Dtests=disabled): the main job needs none of them, nor the test-only
# packages some of them are built from (scripts/install-deps.sh test).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
logs=$build/main-logs
mkdir -p "$logs"

n=0
# step NAME LOG CMD...: CMD's output into $logs/LOG; on failure, say so and stop.
step() {
	name=$1 log=$logs/$2
	shift 2
	n=$((n + 1))
	printf 'main.sh: [%d/3] %s (log %s)\n' $n "$name" "$log"
	t0=$(date +%s)
	if "$@" >"$log" 2>&1; then
		printf 'main.sh:       done in %d s\n' $(($(date +%s) - t0))
		return 0
	else
		rc=$?
	fi
	printf 'main.sh: step "%s" failed (exit %d); the end of %s:\n' "$name" $rc "$log" >&2
	tail -n 30 "$log" | sed 's/^/    /' >&2
	exit $rc
}

configure() {
	if [ -f "$build/build.ninja" ]; then
		meson configure "$build" -Dtests=disabled
	else
		meson setup "$build" --buildtype=release -Dtests=disabled
	fi
}

step "installing the packages the build needs (scripts/install-deps.sh build)" install-deps.log \
	./scripts/install-deps.sh build
step "configuring the build in $build (meson setup)" setup.log configure
step "building (meson compile)" compile.log meson compile -C "$build"
echo

set -- ${SHSTK_DB:+--db "$SHSTK_DB"} "$@"
"$build/cli/shstkctl" scan "$@"
echo
exec "$build/cli/shstkctl" report ${SHSTK_DB:+--db "$SHSTK_DB"}
