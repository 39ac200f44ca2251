#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a fresh Debian 12 machine: install what the build needs,
# build shstk-policy, scan this machine's binaries into the default SQLite
# database and print the report.
#   ./scripts/main.sh [shstkctl scan arguments...]
# Environment: BUILD_DIR (default ./build), SHSTK_DB (default: shstkctl's
# default, /var/lib/shstk-policy/shstk.db for root).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

./scripts/install-deps.sh build
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" --buildtype=release >/dev/null
fi
meson compile -C "$build" >/dev/null

set -- ${SHSTK_DB:+--db "$SHSTK_DB"} "$@"
"$build/cli/shstkctl" scan "$@"
echo
exec "$build/cli/shstkctl" report ${SHSTK_DB:+--db "$SHSTK_DB"}
