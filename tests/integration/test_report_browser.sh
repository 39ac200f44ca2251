#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The rollout report in a real browser: headless Chromium (Debian's
# `chromium`) renders `shstkctl report --format=html` of the empty, the
# realistic and the 100 000-executable database (tests/include/
# report-fixtures.sh).  For each, the screenshot is not blank (at least 1 %
# of its pixels differ from the background: report_html_check.py png) and
# the DOM Chromium built (--dump-dom) holds every number of
# `report --format=json` the page must show, in the cells that say which
# (report_html_check.py numbers), and still nothing that fetches or runs.
# How long Chromium takes is bench/report/run's business, never asserted
# here.  The realistic screenshot is the README's: SHSTK_UPDATE_SCREENSHOT=1
# copies it to docs/report.png.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd chromium chromium
need_cmd python3
need_cmd sqlite3
need_cmd readelf binutils
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
. "$SHSTK_SRCDIR/tests/include/report-fixtures.sh"
check="python3 $SHSTK_SRCDIR/tests/integration/report_html_check.py"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# chromium ARGS...: headless, no sandbox (tests may run as root), its
# profile in $work; bounded so that a hung browser fails the test instead
# of holding it (a deadlock guard, not a speed claim).
chrome() {
	HOME="$work" timeout 180 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$work/profile" "$@" 2>>"$work/chromium.log"
}

# render NAME DB ARGS...: the JSON and the page of DB; the page rendered.
render() {
	_name=$1
	_db=$2
	shift 2
	if ! "$ctl" --db "$_db" report --format=json "$@" >"$work/$_name.json" ||
		! "$ctl" --db "$_db" report --format=html "$@" >"$work/$_name.html"; then
		echo "FAIL: $_name: report failed"
		fail=1
		return
	fi
	rm -f "$work/$_name.png"
	if ! chrome --window-size=1000,1400 --screenshot="$work/$_name.png" "file://$work/$_name.html" >/dev/null ||
		[ ! -s "$work/$_name.png" ]; then
		echo "FAIL: $_name: chromium made no screenshot"
		tail -n 5 "$work/chromium.log"
		fail=1
		return
	fi
	$check png "$work/$_name.png" || fail=1
	if ! chrome --dump-dom "file://$work/$_name.html" >"$work/$_name.dom.html" || [ ! -s "$work/$_name.dom.html" ]; then
		echo "FAIL: $_name: chromium dumped no DOM"
		tail -n 5 "$work/chromium.log"
		fail=1
		return
	fi
	$check numbers "$work/$_name.json" "$work/$_name.dom.html" || fail=1
	$check page "$work/$_name.dom.html" || fail=1
}

report_db_empty "$work/empty.db" "$work"
printf '[policy]\nstage = off\n' >"$work/off.conf"
render empty "$work/empty.db" --policy "$work/off.conf"

report_db_realistic "$work/real.db" "$work"
render real "$work/real.db" --policy "$work/policy.conf"
# What a reader sees of the hostile names: the text, escaped nowhere twice.
if grep -q '&lt;script&gt;alert(1)&lt;' "$work/real.dom.html" && ! grep -qi '<script' "$work/real.dom.html"; then
	echo "ok: real: the browser shows the <script> name as text and built no script element"
else
	echo "FAIL: real: the hostile name is not text in the browser's DOM"
	fail=1
fi
if [ "${SHSTK_UPDATE_SCREENSHOT:-0}" = 1 ] && [ -s "$work/real.png" ]; then
	# a binary in the repository: kept small
	if [ "$(stat -c %s "$work/real.png")" -lt 204800 ]; then
		mkdir -p "$SHSTK_SRCDIR/docs"
		cp "$work/real.png" "$SHSTK_SRCDIR/docs/report.png"
		echo "updated: docs/report.png"
	else
		echo "FAIL: the screenshot is $(stat -c %s "$work/real.png") bytes, over 200 KiB: not copied"
		fail=1
	fi
fi

report_db_synthetic "$work/syn.db" "$work" 100000
printf '[policy]\nstage = audit\n' >"$work/audit.conf"
render synthetic "$work/syn.db" --policy "$work/audit.conf"
exit $fail
