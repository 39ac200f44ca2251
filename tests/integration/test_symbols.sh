#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Function names of violation addresses (issue 19, part 2), end to end: a
# stripped program whose symbols exist only on a local debuginfod server
# (Debian's debuginfod, started here on a loopback port, serving the split
# debug file).  A violation recorded through shstkd's recorder and
# symboliser (tests/tools/shstk-evidence, which does what shstkd does once
# the allowlist is published) must show the function names in
# `shstkctl violations` and `shstkctl explain`, table and JSON.  Without the
# server: no name, and no failure.  A hostile symbol name is escaped like
# every string from the database.  And neither shstkd nor shstkctl links
# libdebuginfod: a machine without it must still run them.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"

need_cmd debuginfod debuginfod
need_cmd debuginfod-find debuginfod
need_cmd objcopy binutils
need_cmd readelf binutils
need_cmd sqlite3 sqlite3
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
ev="$SHSTK_BUILDDIR/tests/tools/shstk-evidence"
target="$SHSTK_BUILDDIR/tests/tools/symbols-target"
for f in "$ctl" "$ev" "$target" "$SHSTK_BUILDDIR/auditd/shstkd"; do
	[ -x "$f" ] || missing "$f" "run through meson test, which builds it"
done
# The host's servers (Debian's profile sets DEBUGINFOD_URLS) are never asked.
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH SHSTK_DEBUG_ROOT || true

work=$(mktemp -d /tmp/shstk-symbols.XXXXXX)
dpid=
cleanup() {
	[ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true
	[ -z "$dpid" ] || wait "$dpid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok - $1"; }
bad() {
	echo "not ok - $1"
	fail=1
}

# ---- the program: symbols only in its split debug file ----------------------
mkdir -p "$work/bin" "$work/srv" "$work/empty" "$work/hroot"
cp "$target" "$work/full"
objcopy --only-keep-debug "$work/full" "$work/srv/symbols-target.debug"
objcopy --strip-all "$work/full" "$work/bin/victim"
if readelf -sW "$work/bin/victim" | grep -q shstk_symtest; then
	echo "FAIL: the stripped copy still names shstk_symtest_*"
	exit 1
fi
buildid=$(readelf -nW "$work/full" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$buildid" ] || { echo "FAIL: $target has no build-id"; exit 1; }

# file_offset FILE SYMBOL: the symbol's file offset, through the PT_LOAD
# that maps it (what the kernel reports: an offset into the object).
file_offset() {
	_v=$(readelf -sW "$1" | awk -v s="$2" '$8 == s { print $2; exit }')
	[ -n "$_v" ] || { echo "FAIL: no symbol $2 in $1" >&2; exit 1; }
	readelf -lW "$1" | while read -r _t _off _va _pa _fsz _rest; do
		[ "$_t" = LOAD ] || continue
		if [ $((0x$_v)) -ge $((_va)) ] && [ $((0x$_v)) -lt $((_va + _fsz)) ]; then
			printf '0x%x\n' $((0x$_v - _va + _off))
			break
		fi
	done
}
off_a=$(file_offset "$work/full" shstk_symtest_alpha)
off_b=$(file_offset "$work/full" shstk_symtest_beta)
[ -n "$off_a" ] && [ -n "$off_b" ] || { echo "FAIL: no offsets"; exit 1; }
ip_off=$(printf '0x%x' $((off_a + 3)))
ret_off=$(printf '0x%x' $((off_b + 1)))

# record DB [ENV...]: one audit-mode violation of bin/victim: ip in alpha,
# the expected return in beta, named by the kernel log's basename.
record() {
	_db=$1
	shift
	"$ctl" --db "$_db" scan --no-packages --no-progress "$work/bin" >/dev/null
	env SHSTK_DEBUG_ROOT="$work/empty" "$@" "$ev" "$_db" violation "$work/bin/victim" 978310801 4242 audit \
		"near ret" audit continued "$work/bin/victim" "$ip_off" victim "$ret_off" 0x7ffff7ff8ff8
}

# ---- a local debuginfod on a loopback port ------------------------------------
# A port of our own: another test (or helper) may hold any fixed one, so
# try a few; debuginfod exits when it cannot listen.
port=
for try in 1 2 3 4 5 6 7 8; do
	p=$((20000 + ($$ * 7 + try * 977) % 40000))
	debuginfod -F -p "$p" -d "$work/debuginfod.sqlite" -t 0 -g 0 -c 1 "$work/srv" \
		>"$work/debuginfod.log" 2>&1 &
	dpid=$!
	# Up (listening, or gone): its log says which.
	if wait_for 30 grep -q -e "started http server on" -e "cannot" -e "error" "$work/debuginfod.log" &&
		grep -q "started http server on" "$work/debuginfod.log" && kill -0 "$dpid" 2>/dev/null; then
		port=$p
		break
	fi
	kill "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	dpid=
done
if [ -z "$port" ]; then
	cat "$work/debuginfod.log"
	echo "FAIL: debuginfod did not start on any of 8 ports"
	exit 1
fi
url="http://127.0.0.1:$port"
# Served once its first scan has indexed the debug file.  Each probe has a
# fresh client cache: libdebuginfod remembers a miss for 10 minutes.
probe_n=0
served() {
	probe_n=$((probe_n + 1))
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH="$work/probe$probe_n" \
		debuginfod-find debuginfo "$buildid" >/dev/null 2>&1
}
if ! wait_for 60 served; then
	cat "$work/debuginfod.log"
	echo "FAIL: debuginfod on port $port never served build-id $buildid"
	exit 1
fi
ok "debuginfod serves $buildid on 127.0.0.1:$port"

# ---- with the server: the names ----------------------------------------------
db="$work/with.db"
if record "$db" DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$work/cache"; then
	ok "recorded with the server"
else
	bad "recorded with the server"
fi
got=$(sqlite3 "$db" "SELECT coalesce(ip_symbol, '-') || ' ' || coalesce(ret_symbol, '-') FROM violations")
if [ "$got" = "shstk_symtest_alpha+0x3 shstk_symtest_beta+0x1" ]; then
	ok "stored: $got"
else
	bad "stored: '$got', want 'shstk_symtest_alpha+0x3 shstk_symtest_beta+0x1'"
fi
out=$("$ctl" --db "$db" violations)
want="near ret at $work/bin/victim+$ip_off (shstk_symtest_alpha+0x3), expected victim+$ret_off (shstk_symtest_beta+0x1)"
case $out in
*"$want"*) ok "violations: $want" ;;
*) echo "$out"; bad "violations lacks: $want" ;;
esac
out=$("$ctl" --db "$db" violations --format=json)
case $out in
*'"ip_symbol":"shstk_symtest_alpha+0x3"'*'"expected_symbol":"shstk_symtest_beta+0x1"'*) ok "violations --format=json" ;;
*) echo "$out"; bad "violations --format=json lacks the names" ;;
esac
out=$("$ctl" --db "$db" explain "$work/bin/victim")
case $out in
*"(shstk_symtest_alpha+0x3), expected victim+$ret_off (shstk_symtest_beta+0x1)"*) ok "explain" ;;
*) echo "$out"; bad "explain lacks the names" ;;
esac
out=$("$ctl" --db "$db" explain --format=json "$work/bin/victim")
case $out in
*'"ip_symbol":"shstk_symtest_alpha+0x3"'*'"expected_symbol":"shstk_symtest_beta+0x1"'*) ok "explain --format=json" ;;
*) echo "$out"; bad "explain --format=json lacks the names" ;;
esac

# ---- without it: no name, no failure -----------------------------------------
db="$work/without.db"
if record "$db"; then ok "recorded without DEBUGINFOD_URLS"; else bad "recorded without DEBUGINFOD_URLS"; fi
got=$(sqlite3 "$db" "SELECT count(*) || ' ' || coalesce(ip_symbol, '-') || coalesce(ret_symbol, '-') FROM violations")
[ "$got" = "1 --" ] && ok "no server: the violation, no names" || bad "no server: '$got', want '1 --'"
out=$("$ctl" --db "$db" violations)
case $out in
*"at $work/bin/victim+$ip_off, expected victim+$ret_off,"*) ok "violations without names" ;;
*) echo "$out"; bad "violations without names" ;;
esac
kill "$dpid"
wait "$dpid" 2>/dev/null || true
dpid=
db="$work/gone.db"
if record "$db" DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$work/cache-gone"; then
	ok "recorded with the server gone"
else
	bad "recorded with the server gone"
fi
got=$(sqlite3 "$db" "SELECT count(*) || ' ' || coalesce(ip_symbol, '-') || coalesce(ret_symbol, '-') FROM violations")
[ "$got" = "1 --" ] && ok "server gone: the violation, no names" || bad "server gone: '$got', want '1 --'"

# ---- a hostile name: escaped for the terminal, valid JSON ----------------------
esc=$(printf '\033')
objcopy --redefine-sym "shstk_symtest_alpha=evil${esc}[2Jname" "$work/full" "$work/hfull"
hid=$(readelf -nW "$work/hfull" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
mkdir -p "$work/hroot/.build-id/$(echo "$hid" | cut -c1-2)"
objcopy --only-keep-debug "$work/hfull" "$work/hroot/.build-id/$(echo "$hid" | cut -c1-2)/$(echo "$hid" | cut -c3-).debug"
db="$work/hostile.db"
"$ctl" --db "$db" scan --no-packages --no-progress "$work/bin" >/dev/null
SHSTK_DEBUG_ROOT="$work/hroot" "$ev" "$db" violation "$work/bin/victim" 978310801 4242 audit "near ret" audit \
	continued "$work/bin/victim" "$ip_off" - 0 0x7ffff7ff8ff8 || bad "recorded the hostile name"
got=$(sqlite3 "$db" "SELECT hex(ip_symbol) FROM violations")
[ "$got" = "$(printf 'evil\033[2Jname+0x3' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" ] &&
	ok "hostile name stored as read" || bad "hostile name stored: $got"
for cmd in "violations" "explain $work/bin/victim"; do
	# shellcheck disable=SC2086
	out=$("$ctl" --db "$db" $cmd)
	case $out in
	*"$esc"*) bad "$cmd: a raw ESC reached the terminal" ;;
	*"evil\\x1b[2Jname+0x3"* | *"evil\\033[2Jname+0x3"* | *"evil\\e[2Jname+0x3"*) ok "$cmd: the name escaped" ;;
	*) echo "$out"; bad "$cmd: the hostile name is not shown escaped" ;;
	esac
	# shellcheck disable=SC2086
	"$ctl" --db "$db" $cmd --format=json | python3 -c 'import json, sys
raw = sys.stdin.read()
assert "\x1b" not in raw, "a raw ESC in the JSON"
def strings(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, str):
        yield v
assert "evil\x1b[2Jname+0x3" in list(strings(json.loads(raw))), raw' &&
		ok "$cmd --format=json: the name, valid JSON" || bad "$cmd --format=json"
done

# ---- libdebuginfod is loaded, never linked ------------------------------------
for f in "$SHSTK_BUILDDIR/auditd/shstkd" "$ctl"; do
	if readelf -dW "$f" | grep NEEDED | grep -q debuginfod; then
		bad "$f links libdebuginfod: it would not start on a machine without it"
	else
		ok "$f does not link libdebuginfod"
	fi
done

exit $fail
