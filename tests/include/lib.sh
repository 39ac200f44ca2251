# SPDX-License-Identifier: GPL-2.0-or-later
# What the shell tests share; source it with
#   . "$SHSTK_SRCDIR/tests/include/lib.sh"
# (POSIX sh: the tests run under dash and bash alike).

# A prerequisite the test cannot run without: fail, naming it and how to get
# it.  Never a skip: a machine without it must show red.
missing() {
	echo "missing: $1 ($2)"
	exit 1
}

# need_cmd CMD [PACKAGE]: the command must be on PATH.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || missing "$1" "apt-get install ${2:-$1}"
}

# need_root WHY: the test must run as root.
need_root() {
	[ "$(id -u)" = 0 ] || missing "root" "$1"
}

# shstkd_confine WORKDIR: sets $confine to a command prefix for shstkd.
# shstkd writes its pid to /run/shstk-policy/shstkd.pid when it may (the
# core-dump helper signals that pid); where shstk-policy is installed that
# file is the real daemon's, so test daemons then run in a mount namespace
# of their own with an empty tmpfs over the directory.  Empty otherwise.
shstkd_confine() {
	confine=
	if [ -d /run/shstk-policy ] && [ -w /run/shstk-policy ]; then
		need_cmd unshare util-linux
		printf '#!/bin/sh\nmount -t tmpfs -o size=64k shstkd-test /run/shstk-policy && exec "$@"\n' \
			>"$1/confine"
		chmod +x "$1/confine"
		confine="unshare --mount --propagation private $1/confine"
	fi
}

# wait_for SECONDS CMD [ARGS...]: runs CMD every 20 ms until it succeeds.
# Returns 0 as soon as it does, 1 when SECONDS have passed without.  The
# bound is a deadlock guard, not an assertion about speed.
wait_for() {
	_wf_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_wf_end" ] || return 1
		sleep 0.02
	done
	return 0
}

# golden_check NAME CMD [ARGS...]: runs CMD; its output (stdout and stderr)
# and a last line "exit N", passed through the caller's norm() filter (what
# varies between runs: work dir, build-ids, times), must equal
# $golden/$golden_prefix$NAME.expected.  Prints "ok - NAME", or the diff and
# "not ok - NAME" and sets fail=1.  In $work: NAME.raw (the output as it
# came) and NAME.out (what is compared).
# SHSTK_UPDATE_GOLDEN=1 rewrites the expected file.
golden_check() {
	_gc_name=$1
	shift
	_gc_out="$work/$_gc_name.out"
	_gc_rc=0
	"$@" >"$work/$_gc_name.raw" 2>&1 || _gc_rc=$?
	{ norm <"$work/$_gc_name.raw"; printf 'exit %s\n' "$_gc_rc"; } >"$_gc_out"
	if [ "${SHSTK_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$_gc_out" "$golden/$golden_prefix$_gc_name.expected"
	fi
	if diff -u "$golden/$golden_prefix$_gc_name.expected" "$_gc_out"; then
		echo "ok - $_gc_name"
	else
		echo "not ok - $_gc_name"
		fail=1
	fi
}

# held DIR AS EXIT SOCKET ALLOWLIST PRELOAD: a dash under the preload (its
# environment given to the shell alone) as AS (root or nobody) that stays
# until `release DIR`, then exits with EXIT; its pid in $hpid.  shstkd
# records a start only from what the kernel says about a live process, so a
# test that must see a run holds the process until it has (true(1) may be
# gone before the daemon looks).  DIR (made here, writable by nobody) holds
# the FIFO and the pid file.  python3 drops the privileges: a setpriv under
# the preload would exec, and its datagram, naming setpriv, be forged.
held() {
	[ -p "$1/go" ] || { mkdir -p "$1" && mkfifo "$1/go" && chown -R nobody:nogroup "$1"; } || return 1
	rm -f "$1/pid"
	python3 -c 'import os, sys
d, who, code, sock, al, pl = sys.argv[1:]
if who == "nobody":
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
env = dict(os.environ, SHSTK_EVENTS_SOCKET=sock, SHSTK_ALLOWLIST=al, LD_PRELOAD=pl)
os.execve("/bin/sh", ["sh", "-c", "echo $$ >\"$0/pid\"; read _ <\"$0/go\"; exit $1", d, code], env)' "$@" &
	wait_for 10 test -s "$1/pid" || { echo "FAIL: held shell did not start"; return 1; }
	hpid=$(cat "$1/pid")
}
release() { echo >"$1/go"; }

# forge_build_id SRC DST HEX: DST is a copy of the ELF program SRC whose
# build-id note says HEX (same length as SRC's): what anyone can make of a
# program of their own to claim another's identity.
forge_build_id() {
	need_cmd objcopy binutils
	need_cmd readelf binutils
	cp "$1" "$2" && objcopy -O binary --only-section=.note.gnu.build-id "$2" "$2.note" &&
		python3 -c 'import sys
n = bytearray(open(sys.argv[1], "rb").read()); i = bytes.fromhex(sys.argv[2])
n[len(n) - len(i):] = i; open(sys.argv[1], "wb").write(n)' "$2.note" "$3" &&
		objcopy --update-section .note.gnu.build-id="$2.note" "$2" && rm -f "$2.note" && chmod 755 "$2" || return 1
	[ "$(readelf -n "$2" | sed -n 's/.*Build ID: //p')" = "$3" ] ||
		{ echo "FAIL: $2's build-id is not $3"; return 1; }
}

# exit_on_signals: make TERM, INT, HUP and PIPE exit the script (with the
# shell's usual 128+N), so that its EXIT trap runs: dash runs the EXIT trap
# only on exit, not when a signal kills it, and meson stops a test at its
# timeout with SIGTERM; daemons a test started must not outlive it then
# either (nor when its output pipe closes).
exit_on_signals() {
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap 'exit 129' HUP
	trap 'exit 141' PIPE
}
