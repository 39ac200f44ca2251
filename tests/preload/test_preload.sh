#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The real libshstk_preload.so in real programs, on whatever kernel this is:
# decisions for every allowlist state, events on the socket, every truncation
# and bit flip of an allowlist, overrides and secure execution, dlopen, and
# output and exit status identical with and without the preload.
set -u
: "${PRELOAD_LIB:?}" "${TP_DIR:?}" "${SHSTKCTL:?}" "${SHSTK_SRCDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
# All of it runs, or the test fails: the syscalls of a daemon-less start are
# read with strace, secure execution needs root to make a setuid-to-nobody
# copy, and an allowlist owned by nobody must be refused.
need_cmd strace
need_cmd objcopy binutils
need_cmd readelf binutils
need_cmd python3
need_root "the setuid and foreign-owner cases chown to nobody: run the tests as root"
id nobody >/dev/null 2>&1 || missing "user nobody" "Debian's base-passwd creates it: dpkg-reconfigure base-passwd"

W=$(mktemp -d /tmp/test-preload.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
PROBE=$TP_DIR/tp-probe
EVRECV=$TP_DIR/tp-evrecv
checks=0
fails=0

pass() { checks=$((checks + 1)); }
fail() {
	checks=$((checks + 1))
	fails=$((fails + 1))
	echo "FAIL: $*"
}
# expect DESC TEXT REGEX...: every REGEX (grep -E) matches TEXT
expect() {
	local desc=$1 text=$2 re
	shift 2
	for re in "$@"; do
		if grep -Eq -- "$re" <<<"$text"; then pass; else fail "$desc: no /$re/ in: $text"; fi
	done
}
expect_not() {
	local desc=$1 text=$2 re
	shift 2
	for re in "$@"; do
		if grep -Eq -- "$re" <<<"$text"; then fail "$desc: unexpected /$re/ in: $text"; else pass; fi
	done
}
al_write() { "$SHSTKCTL" allowlist write --generation 5 -o "$@"; }
# probe ALLOWLIST [ENV...]: the probe's event line under the preload
probe() {
	local al=$1
	shift
	env "$@" SHSTK_ALLOWLIST="$al" SHSTK_EVENTS_SOCKET="$W/none.sock" LD_PRELOAD="$PRELOAD_LIB" "$PROBE"
}

# ---- what this kernel does with ARCH_SHSTK_ENABLE: decides what "applied" must be ----
al_write "$W/al-enf" "enforce exe:$PROBE ignore-marking" || exit 1
out=$(probe "$W/al-enf")
expect "preload loaded" "$out" '^preload=present$' 'event type=start'
if grep -q 'flags=.*no-kernel' <<<"$out"; then
	kernel=none; applied_on=off
elif grep -q 'flags=.*no-cpu' <<<"$out"; then
	kernel=nocpu; applied_on=off
else
	kernel=shstk; applied_on=enforce
fi
echo "# kernel shadow-stack support: $kernel"

# ---- decisions for each allowlist state ----
out=$(probe "$W/missing")
expect "missing allowlist" "$out" 'decision=off applied=off source=no-allowlist' 'err=0 '
al_write "$W/al-other" "enforce build-id:0123456789abcdef" || exit 1
out=$(probe "$W/al-other")
expect "unlisted" "$out" 'decision=off applied=off source=unlisted by=nobody listed=- err=0 gen=5'
al_write "$W/al-off" "off exe:$PROBE" || exit 1
out=$(probe "$W/al-off")
expect "listed off" "$out" 'decision=off applied=off source=allowlist by=nobody listed=off err=0'
al_write "$W/al-audit" "audit exe:$PROBE" || exit 1
out=$(probe "$W/al-audit")
if [ $kernel = shstk ]; then
	# Applied is audit on a patched kernel, off (audit refused, turned off again) on others.
	expect "listed audit" "$out" 'decision=audit applied=(audit|off) source=allowlist'
else
	expect "listed audit" "$out" 'decision=audit applied=off source=allowlist by=nobody listed=audit err=(22|95)'
	expect_not "listed audit" "$out" 'locked'
fi
out=$(probe "$W/al-enf")
expect "listed enforce, markings waived" "$out" "decision=enforce applied=$applied_on source=allowlist"
[ $kernel = shstk ] && expect "enforce locks" "$out" 'locked'
al_write "$W/al-enf-marked" "enforce exe:$PROBE" || exit 1
out=$(probe "$W/al-enf-marked")
# Debian's own objects carry no SHSTK marking: enforce is demoted to audit.
if grep -q 'all-marked' <<<"$out"; then
	expect "listed enforce, all marked" "$out" 'decision=enforce'
else
	expect "listed enforce, unmarked objects" "$out" 'decision=audit' 'demoted-unmarked' 'name=.+'
fi

# File key: a copy without a build-id is found through stat of /proc/self/exe,
# under any alias, and loses its entry when its content (mtime) changes.
cp "$PROBE" "$W/probe-noid"
objcopy --remove-section .note.gnu.build-id "$W/probe-noid" || exit 1
ln -s "$W/probe-noid" "$W/probe-alias"
al_write "$W/al-file" "off exe:$W/probe-noid" || exit 1
expect "file key written" "$("$SHSTKCTL" allowlist dump "$W/al-file")" '^off file:[0-9]+:[0-9]+:[0-9]+:[0-9]+$'
for exe in "$W/probe-noid" "$W/probe-alias"; do
	out=$(SHSTK_ALLOWLIST="$W/al-file" LD_PRELOAD="$PRELOAD_LIB" "$exe")
	expect "file key via $exe" "$out" 'source=allowlist by=nobody listed=off' 'key=file:'
done
touch -d '2001-01-01' "$W/probe-noid"
out=$(SHSTK_ALLOWLIST="$W/al-file" LD_PRELOAD="$PRELOAD_LIB" "$W/probe-noid")
expect "file key, new mtime" "$out" 'source=unlisted'

# Files up to 4 KiB are read, larger ones mapped: the mapped path too, with 200
# other entries (14 KiB), must find the probe, miss, and reject a damaged file.
others=()
for ((i = 0; i < 200; i++)); do others+=("enforce build-id:$(printf '%040x' $((i * 7919 + 1)))"); done
al_write "$W/al-big" "${others[@]}" "audit exe:$PROBE" || exit 1
al_write "$W/al-big-other" "${others[@]}" || exit 1
[ "$(stat -c %s "$W/al-big")" -gt 4096 ] && pass || fail "al-big is not larger than the read buffer"
expect "large allowlist, listed" "$(probe "$W/al-big")" 'decision=audit applied=(audit|off) source=allowlist .*listed=audit'
expect "large allowlist, unlisted" "$(probe "$W/al-big-other")" 'decision=off applied=off source=unlisted .*gen=5'
head -c -1 "$W/al-big" >"$W/al-big-trunc"
expect "large allowlist, truncated" "$(probe "$W/al-big-trunc")" 'source=bad-allowlist'
python3 - "$W/al-big" "$W/al-big-flip" <<'EOF' || exit 1
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[len(b) - 40] ^= 0x10  # inside the last block of entries
open(sys.argv[2], 'wb').write(b)
EOF
expect "large allowlist, bit flip in a block the lookup reads" "$(probe "$W/al-big-flip")" 'source=bad-allowlist'

# A FIFO at the allowlist path (issue 17): refused at once, never waited on.
mkfifo "$W/al-fifo"
out=$(timeout 60 env SHSTK_ALLOWLIST="$W/al-fifo" SHSTK_EVENTS_SOCKET="$W/none.sock" LD_PRELOAD="$PRELOAD_LIB" \
	"$PROBE" 2>&1)
rc=$?
[ $rc = 0 ] && pass || fail "FIFO allowlist: the process did not start (exit $rc, 124: it hung)"
expect "FIFO allowlist" "$out" 'decision=off applied=off source=bad-allowlist'

# ---- overrides and the kill switch ----
al_write "$W/al-ovr" --allow-overrides "off build-id:00" || exit 1
out=$(probe "$W/al-ovr" SHSTK_POLICY=enforce)
expect "override allowed" "$out" "decision=enforce applied=$applied_on source=override" 'override-used'
out=$(probe "$W/al-ovr" SHSTK_POLICY=bogus)
expect "override garbage" "$out" 'decision=off applied=off source=unlisted' 'override-ignored'
out=$(probe "$W/al-other" SHSTK_POLICY=enforce)
expect "override not allowed" "$out" 'decision=off applied=off source=unlisted' 'override-ignored'
out=$(probe "$W/al-enf" SHSTK_PRELOAD_DISABLE=1)
expect "kill switch" "$out" 'decision=off applied=off source=disabled'

# ---- corrupt allowlists: every truncation, every bit flip, unsafe owner/mode ----
al_write "$W/al-small" --allow-overrides "audit exe:$PROBE" || exit 1
size=$(stat -c %s "$W/al-small")
bad=0
for ((len = 0; len < size; len++)); do
	head -c "$len" "$W/al-small" >"$W/al-trunc"
	out=$(probe "$W/al-trunc" SHSTK_POLICY=enforce)
	grep -q 'decision=off applied=off source=bad-allowlist' <<<"$out" || { bad=$((bad + 1)); echo "truncated at $len: $out"; }
done
[ $bad -eq 0 ] && pass || fail "$bad of $size truncations not rejected"
python3 - "$W/al-small" "$W/flips" <<'EOF' || exit 1
import sys, os
data = open(sys.argv[1], 'rb').read()
os.mkdir(sys.argv[2])
for bit in range(len(data) * 8):
    b = bytearray(data)
    b[bit // 8] ^= 1 << (bit % 8)
    open(f"{sys.argv[2]}/{bit}", 'wb').write(b)
EOF
bad=0
for f in "$W"/flips/*; do
	out=$(probe "$f" SHSTK_POLICY=enforce)
	grep -q 'decision=off applied=off source=bad-allowlist' <<<"$out" || { bad=$((bad + 1)); echo "bit ${f##*/}: $out"; }
done
[ $bad -eq 0 ] && pass || fail "$bad of $((size * 8)) bit flips not rejected"
echo "# corrupt: $size truncations and $((size * 8)) bit flips checked"
cp "$W/al-small" "$W/al-mode" && chmod 666 "$W/al-mode"
expect "world-writable allowlist" "$(probe "$W/al-mode")" 'source=bad-allowlist'
cp "$W/al-small" "$W/al-owner" && chown nobody "$W/al-owner"
expect "allowlist owned by another user" "$(probe "$W/al-owner")" 'source=bad-allowlist'
expect "directory as allowlist" "$(probe "$W")" 'source=bad-allowlist'

# ---- events on the socket ----
out=$(SHSTK_ALLOWLIST="$W/al-audit" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" "$PROBE")
own=$(grep '^event' <<<"$out" | head -1)
recv=$(grep '^event' <<<"$out" | tail -n +2)
if [ -n "$own" ] && [ "$own" = "$recv" ]; then pass; else fail "event on the socket differs from the probe's: '$own' vs '$recv'"; fi
expect "event fields" "$recv" 'type=start pid=[0-9]+ decision=audit .* listed=audit .* gen=5 .* key=build-id:[0-9a-f]{40}'
# The kernel's per-program policy, read with Seccomp: from the same status
# file: the probe has none (no trusted.shstk; this host's kernel may not even
# have the series), which is "none", not "unknown" (not read).
expect "event names the kernel's policy" "$recv" ' kpolicy=none key='
# Only a process the decision runs with a shadow stack announces itself (its
# runs are the evidence shstkd counts); here sh and the probe are listed audit.
al_write "$W/al-chain" "audit exe:$(readlink -f /bin/sh)" "audit exe:$PROBE" \
	"audit exe:$TP_DIR/tp-threads" "audit exe:$(readlink -f /bin/true)" || exit 1
out=$(SHSTK_ALLOWLIST="$W/al-chain" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" \
	"$EVRECV" "$W/ev.sock" sh -c "$PROBE >/dev/null; $PROBE >/dev/null; exit 4")
rc=$?
n=$(grep -c '^event type=start' <<<"$out")
[ "$n" = 3 ] && pass || fail "fork/exec chain: $n start events, expected 3 (sh and two probes): $out"
[ $rc = 4 ] && pass || fail "fork/exec chain: exit status $rc, expected 4"
npid=$(grep -o 'pid=[0-9]*' <<<"$out" | sort -u | wc -l)
[ "$npid" = 3 ] && pass || fail "fork/exec chain: $npid distinct pids"
out=$(SHSTK_ALLOWLIST="$W/al-chain" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" "$TP_DIR/tp-threads")
n=$(grep -c '^event' <<<"$out")
[ "$n" = 1 ] && pass || fail "threads: $n events, expected 1"
# Unlisted or listed off: no announcement, no socket, not even a look at the
# socket path.  Listed enforce: announced (shstkd follows how it ends).
for al in "$W/al-other" "$W/al-off" "$W/al-enf"; do
	out=$(SHSTK_ALLOWLIST="$al" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" "$PROBE")
	n=$(grep -c '^event' <<<"$out")
	want=1
	[ "$al" = "$W/al-enf" ] && want=2
	[ "$n" = $want ] && pass || fail "${al##*/}: $n events (the probe's own and received), expected $want"
done
out=$(SHSTK_ALLOWLIST="$W/al-other" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" \
	strace -qq -e trace=socket,sendto,stat,newfstatat,getpid /bin/true 2>&1)
expect_not "unlisted: nothing but the allowlist looked at" "$out" '^(socket|sendto|getpid)\(' 'ev.sock'
out=$(SHSTK_PRELOAD_DISABLE=1 SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" /bin/true)
expect_not "kill switch sends nothing" "$out" '^event'
# No daemon, no socket: not even a socket is created (it costs ten times a stat).
out=$(SHSTK_ALLOWLIST="$W/al-chain" SHSTK_EVENTS_SOCKET="$W/none.sock" LD_PRELOAD="$PRELOAD_LIB" \
	strace -qq -e trace=socket,sendto,stat,newfstatat /bin/true 2>&1)
expect "no daemon: the socket path is looked at" "$out" "$W/none.sock"
expect_not "no daemon: no socket created" "$out" '^(socket|sendto)\('
: >"$W/not-a-socket"
out=$(SHSTK_ALLOWLIST="$W/al-chain" SHSTK_EVENTS_SOCKET="$W/not-a-socket" LD_PRELOAD="$PRELOAD_LIB" \
	strace -qq -e trace=socket,sendto /bin/true 2>&1)
expect_not "a regular file at the socket path: no socket created" "$out" '^(socket|sendto)\('
# Under a seccomp filter that kills at socket() (SystemCallFilter=~@network-io),
# with the socket there and the program listed audit: it runs, nothing is sent.
out=$(SHSTK_ALLOWLIST="$W/al-audit" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" \
	"$EVRECV" "$W/ev.sock" "$TP_DIR/tp-seccomp" "$PROBE" 2>&1)
rc=$?
[ $rc = 0 ] && pass || fail "seccomp: the probe under a socket-killing filter exited $rc (159: SIGSYS): $out"
expect "seccomp: the preload ran" "$out" '^preload=present$' 'decision=audit .*source=allowlist'
n=$(grep -c '^event' <<<"$out")
[ "$n" = 1 ] && pass || fail "seccomp: $n events (the probe's own and received), expected only its own"
# A long Groups: line (1500 supplementary groups) puts Seccomp: past the
# first 4 KiB of the status file: still read, still no filter, announced.
groups=$(seq -s, 1 1500)
out=$(SHSTK_ALLOWLIST="$W/al-audit" SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" \
	"$EVRECV" "$W/ev.sock" setpriv --groups "$groups" sh -c '[ $(wc -c </proc/self/status) -gt 4096 ] && echo long-status; exec "$0"' "$PROBE" 2>&1)
expect "1500 groups: the status file is over 4 KiB" "$out" '^long-status$'
n=$(grep -c '^event type=start' <<<"$out")
[ "$n" = 2 ] && pass || fail "1500 groups: $n start events (the probe's own and received), expected 2: $out"
# Control: the same filter kills a program that calls socket() itself.
"$TP_DIR/tp-seccomp" /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null
rc=$?
[ $rc = 159 ] && pass || fail "seccomp control: python3 calling socket() under the filter exited $rc, expected 159"
# In audit mode the process waits (25 ms at most) for the daemon's word that
# it has looked: one byte on a socket pair of its own, whose other end it
# passes with the datagram (SCM_RIGHTS), from the uid that owns the event
# socket.  A stand-in daemon answers on it (the wait ends at the answer),
# hands it to nobody who answers (read and ignored: the wait runs out), or
# does not answer; enforce passes nothing and does not wait.  strace shows
# what the process did.
answerer() { # SOCKET MODE: receive one datagram, print its flags, answer per MODE
	rm -f "$W/ack.out"
	python3 -c 'import array, os, socket, struct, sys
path, mode = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if os.path.exists(path): os.unlink(path)
s.bind(path); os.chmod(path, 0o666)
s.settimeout(30)
print("ready", flush=True)
data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
fds = [fd for lvl, typ, d in anc if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS
       for fd in array.array("i", d[:len(d) - len(d) % 4])]
print("flags=%#x fd=%s" % (struct.unpack_from("<I", data, 16)[0], "yes" if fds else "no"), flush=True)
if fds and mode == "owner":
    try:
        socket.socket(fileno=fds[0]).send(b"\1")
    except ConnectionRefusedError:
        pass  # the probe did not wait (SHSTK_PRELOAD_ACK_WAIT_MS=0): gone already
elif fds and mode == "nobody":
    child = os.fork()
    if child == 0:
        os.setgid(65534); os.setuid(65534)
        socket.socket(fileno=fds[0]).send(b"\1")
        print("nobody: sent", flush=True)
        os._exit(0)
    os.waitpid(child, 0)
' "$1" "$2" >"$W/ack.out" &
	wait_for 10 grep -q ready "$W/ack.out" || fail "answerer did not start"
}
acked() { # ALLOWLIST MODE [WAIT]: strace of the probe under an answerer (a socket of its own)
	answerer "$W/ack-$2-${1##*/}.sock" "$2"
	env ${3+SHSTK_PRELOAD_ACK_WAIT_MS="$3"} SHSTK_ALLOWLIST="$1" SHSTK_EVENTS_SOCKET="$W/ack-$2-${1##*/}.sock" \
		LD_PRELOAD="$PRELOAD_LIB" strace -qq -e trace=sendmsg,ppoll,recvmsg "$PROBE" 2>&1 >/dev/null
	wait
}
# The answer that must come in time is given 10 s (SHSTK_PRELOAD_ACK_WAIT_MS,
# its most): a stand-in that forks under strace on a loaded machine can take
# longer than the default 25 ms, which is checked as ppoll's argument.  The
# one that must be ignored is given 5 s, all of which the wait then takes.
out=$(acked "$W/al-audit" owner 10000)
expect "audit, answered by the owner: asks, passes its pair's end" "$(cat "$W/ack.out")" 'flags=0x1[0-9a-f]{4} fd=yes'
expect "audit, answered by the owner: the wait ends at the answer" "$out" '^ppoll\(.*= 1' '^recvmsg\(.*= 1$'
expect_not "audit, answered by the owner: no time-out" "$out" 'Timeout'
out=$(acked "$W/al-audit" nobody 5000)
expect "audit, answered by nobody: read and ignored, the wait runs out" "$out" '^recvmsg\(.*= 1$' '^ppoll\(.*Timeout'
expect "audit, answered by nobody: it did send" "$(cat "$W/ack.out")" '^nobody: sent$'
out=$(acked "$W/al-audit" none)
expect "audit, no answer: the wait runs out" "$out" '^ppoll\(.*Timeout'
expect "audit, the default wait: 25 ms" "$(echo "$out" | grep -m1 '^ppoll(')" 'tv_sec=0, tv_nsec=25000000\}'
for w in 1500:'tv_sec=1, tv_nsec=500000000\}' 99999:'tv_sec=10, tv_nsec=0\}' 0:'tv_sec=0, tv_nsec=0\}' \
	12x:'tv_sec=0, tv_nsec=25000000\}' -1:'tv_sec=0, tv_nsec=25000000\}' 20000x:'tv_sec=0, tv_nsec=25000000\}'; do
	out=$(acked "$W/al-audit" owner "${w%%:*}")
	expect "audit, SHSTK_PRELOAD_ACK_WAIT_MS=${w%%:*}: ppoll's time-out" "$(echo "$out" | grep -m1 '^ppoll(')" "${w#*:}"
done
out=$(acked "$W/al-enf" none)
expect "enforce: announced without asking for an answer" "$(cat "$W/ack.out")" 'flags=0x[0-9a-f]{1,4} fd=no'
expect_not "enforce: no wait" "$out" '^(ppoll|recvmsg)\('
# an enforce entry that wants its runs as evidence (stage canary's share,
# shstkd's flag evidence) waits as audit does
al_write "$W/al-enf-ev" "enforce exe:$PROBE ignore-marking,evidence" || exit 1
out=$(acked "$W/al-enf-ev" owner 10000)
expect "enforce, flag evidence: asks, passes its pair's end" "$(cat "$W/ack.out")" 'flags=0x1[0-9a-f]{4} fd=yes'
expect "enforce, flag evidence: the wait ends at the answer" "$out" '^ppoll\(.*= 1' '^recvmsg\(.*= 1$'
# A gated dlopen of an unmarked object is reported by datagram, except under a filter.
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-other" SHSTK_EVENTS_SOCKET="$W/ev.sock" \
	LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" "$TP_DIR/tp-seccomp" "$TP_DIR/tp-dlopen" \
	"$TP_DIR/libtp-plugin-unmarked.so" 2>&1)
rc=$?
[ $rc = 0 ] && pass || fail "seccomp: gated dlopen under the filter exited $rc: $out"
expect "seccomp: gated dlopen" "$out" '^ok .*libtp-plugin-unmarked.so value=42'
expect_not "seccomp: gated dlopen" "$out" 'type=dlopen'
out=$(SHSTK_EVENTS_SOCKET="$W/ev.sock" LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/ev.sock" "$TP_DIR/tp-dlopen" "$TP_DIR/libtp-plugin-unmarked.so")
expect_not "no dlopen events without a shadow stack" "$out" 'type=dlopen'
out=$(SHSTK_PRELOAD_DEBUG=1 SHSTK_ALLOWLIST="$W/al-audit" LD_PRELOAD="$PRELOAD_LIB" /bin/true 2>&1 >/dev/null)
expect "debug line on stderr" "$out" '^shstk-preload: pid=[0-9]+ id=build-id:[0-9a-f]+ decision=off'

# ---- the dlopen gate, forced on (no CET here) with SHSTK_PRELOAD_GATE_TEST ----
gate() {
	local al=$1
	shift
	SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$al" SHSTK_EVENTS_SOCKET="$W/gate.sock" \
		LD_PRELOAD="$PRELOAD_LIB" "$EVRECV" "$W/gate.sock" "$TP_DIR/tp-dlopen" "$@"
}
UNM=$TP_DIR/libtp-plugin-unmarked.so
MRK=$TP_DIR/libtp-plugin-marked.so
out=$(gate "$W/al-other" "$UNM" "$MRK")
expect "gate, report" "$out" "^ok $UNM value=42" "^ok $MRK value=42" \
	"type=dlopen .*flags=dlopen-unmarked .*name=$UNM\$"
expect_not "gate, report" "$out" "type=dlopen .*name=$MRK" 'stale dlerror'
# Through the gate glibc sees the preload as the caller: a bare name must still be
# searched with the real caller's DT_RUNPATH (the loader finds its sibling).
names=("$TP_DIR/libtp-loader.so" libtp-plugin-marked.so libtp-plugin-unmarked.so libc.so.6)
out=$(gate "$W/al-other" "${names[@]}")
base=$("$TP_DIR/tp-dlopen" "${names[@]}")
expect "gate, caller's search path" "$out" 'ok .*libtp-loader.so value=43'
if [ "$base" = "$(grep -v '^event' <<<"$out")" ]; then pass; else
	fail "gate changes dlopen results: '$base' vs '$out'"
fi
expect_not "gate, caller's search path" "$out" 'stale dlerror'
# The first error a program reads is the one its failed call left, with the
# preload loaded (gate off) and with the gate on: nothing the preload does
# inside dlerror() may clear it first (it used to look glibc's dlerror() up
# with dlsym(), which clears the error: "fail (null)").
for first in "$W/no-such-lib.so" sym:shstk_no_such_symbol; do
	# tp-dlopen-highbase: a library whose l_addr wraps below zero sits
	# between the preload and libc (the lookup once crashed on it)
	base=$("$TP_DIR/tp-dlopen" "$first")
	hb=$("$TP_DIR/tp-dlopen-highbase" "$first" 2>&1)
	out=$(SHSTK_ALLOWLIST="$W/al-other" LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen-highbase" "$first" 2>&1)
	if [ "$out" = "$hb" ]; then pass; else
		fail "first error, high-based library ($first): '$hb' without the preload, '$out' with it"
	fi
	expect "first error, no preload ($first)" "$base" '^(fail|nosym) .*(cannot open|undefined symbol)'
	out=$(SHSTK_ALLOWLIST="$W/al-other" LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "$first")
	if [ "$out" = "$base" ]; then pass; else
		fail "first error, gate off ($first): '$base' without the preload, '$out' with it"
	fi
	out=$(gate "$W/al-other" "$first" | grep -v '^event')
	if [ "$out" = "$base" ]; then pass; else
		fail "first error, gate on ($first): '$base' without the preload, '$out' with it"
	fi
done
al_write "$W/al-refuse" --refuse-dlopen "off build-id:00" || exit 1
out=$(gate "$W/al-refuse" "$UNM" "$MRK" "$TP_DIR/libtp-loader.so")
expect "gate, refuse" "$out" \
	"^fail $UNM: refused by shstk-policy: $UNM is not marked SHSTK or is denied by the allowlist" \
	"^ok $MRK value=42" "^fail .*libtp-loader.so: refused by shstk-policy" \
	"type=dlopen .*flags=dlopen-refused,dlopen-unmarked .*name=$UNM\$"
expect_not "gate, refuse" "$out" 'stale dlerror'
mrk_id=$(readelf -n "$MRK" | sed -n 's/.*Build ID: //p')
al_write "$W/al-deny" "off build-id:$mrk_id" || exit 1
out=$(gate "$W/al-deny" "$MRK")
expect "gate, denied" "$out" "^ok $MRK value=42" "type=dlopen .*listed=off .*flags=dlopen-denied .*key=build-id:$mrk_id name=$MRK\$"
al_write "$W/al-vouch" "audit build-id:$(readelf -n "$UNM" | sed -n 's/.*Build ID: //p') ignore-marking" || exit 1
out=$(gate "$W/al-vouch" "$UNM")
expect_not "gate, vouched for" "$out" 'type=dlopen'
# A refused object that its refusal's dlclose() cannot unload (RTLD_NODELETE,
# or -z nodelete) stays in the link map: a second dlopen() of it, or of a
# library that needs it, added nothing and went through ("ok" after "fail").
# It is judged again each time.
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "nodelete:$UNM" "$UNM" "nodelete:$UNM" 2>&1)
expect "gate, refused and not unloadable (RTLD_NODELETE): refused three times" \
	"$(grep -c "^fail $UNM: refused by shstk-policy: $UNM is not marked" <<<"$out")" '^3$'
expect_not "gate, refused and not unloadable (RTLD_NODELETE)" "$out" '^ok ' 'stale dlerror'
# ... and with a dependency: a marked library that needs an unmarked one,
# both kept by RTLD_NODELETE; again, the dependency alone, then a marked
# library with a marked dependency, which nothing refused concerns.
RR=$TP_DIR/libtp-race-refused.so
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "nodelete:$RR" "$RR" "$TP_DIR/libtp-dep-unmarked.so" \
	"$TP_DIR/libtp-race-churn.so" 2>&1)
expect "gate, refused with its dependency and not unloadable" "$out" \
	"^fail $RR: refused by shstk-policy: .*libtp-dep-unmarked.so is not marked" \
	"^fail $TP_DIR/libtp-dep-unmarked.so: refused by shstk-policy" "^ok $TP_DIR/libtp-race-churn.so value="
expect "gate, refused with its dependency and not unloadable: twice" \
	"$(grep -c "^fail $RR: refused by shstk-policy: .*libtp-dep-unmarked.so is not marked" <<<"$out")" '^2$'
# More refused objects that stayed than the gate keeps (32): 33 copies of the
# unmarked library, each kept by RTLD_NODELETE, then the first again, whose
# entry the ring has forgotten: judged all the same (fail closed).
mkdir -p "$W/many"
many=()
for i in $(seq 1 33); do
	cp "$UNM" "$W/many/libmany$i.so"
	many+=("nodelete:$W/many/libmany$i.so")
done
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "${many[@]}" "$W/many/libmany1.so" 2>&1)
expect "gate, 33 refused objects that stayed, the first again" \
	"$(grep -c "^fail $W/many/libmany[0-9]*.so: refused by shstk-policy" <<<"$out")" '^34$'
# ... but what stayed with a refused library and was not refused itself is
# fine to use: an unmarked library refused, its marked dependency kept by
# RTLD_NODELETE, then a marked library that needs that dependency.
RU=$TP_DIR/libtp-race-unmarked.so
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "nodelete:$RU" "$TP_DIR/libtp-race-churn.so" 2>&1)
expect "gate, the marked dependency of a refused library that stayed" "$out" \
	"^fail $RU: refused by shstk-policy: $RU is not marked" "^ok $TP_DIR/libtp-race-churn.so value="
# Races (issue 17): one thread dlopen()s and dlclose()s a library with a
# dependency without pause while the other dlopen()s a marked library whose
# dependency is unmarked, 3000 times.  Every one must be refused (objects
# found by counting the link map let the dependency through when the other
# thread's dlclose shifted it: 12-15 of 3000 leaked), the churn must never be
# refused for the other thread's objects, and the refusal text must belong
# to its own call (a later dlsym error or success must not read as it).
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$PRELOAD_LIB" timeout 120 "$TP_DIR/tp-race" "$TP_DIR/libtp-race-refused.so" \
	"$TP_DIR/libtp-race-churn.so" 3000 2>&1)
rc=$?
echo "# dlopen race: $out"
[ $rc = 0 ] && pass || fail "dlopen race under the gate: exit $rc: $out"
expect "dlopen race" "$out" '^iterations=3000 leaked=0 wrong_text=0 stale=0 churn_cycles=[1-9][0-9]* churn_failed=0$'
# The gate's lock against glibc's loader lock (issue 17, administrator's
# review): a destructor that dlopen()s while another thread holds the gate's
# lock and waits for the loader lock.  A gate that waits for its lock without
# a bound deadlocks (timeout: exit 124; seen with the unbounded lock).
out=$(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
	LD_PRELOAD="$TP_DIR/libtp-abba-shim.so $PRELOAD_LIB" timeout 30 "$TP_DIR/tp-abba" "$TP_DIR/libtp-abba-lib.so" \
	"$TP_DIR/libtp-dep-marked.so" "$TP_DIR/libtp-plugin-marked.so" 2>&1)
rc=$?
[ $rc = 0 ] && pass || fail "dlopen in a destructor against a gated dlopen: exit $rc (124: deadlock): $out"
expect "dlopen in a destructor against a gated dlopen" "$out" '^y=1 z=1$'
# Objects another call added and has not judged yet (tp-gap.c): thread A's
# gated load of a marked library X that needs an unmarked U is stopped
# before A judges it; the other thread's load of a marked Y, after its 1 s
# wait for the gate's lock, finds X and U in its snapshot.  Counted as loaded
# before its call, a Y that needs U went through and A's refusal of X left U
# loaded for it ("x=0 y=1 u=1"); they are checked with Y's objects now, so Y
# is refused with them, also when it does not need U (the cost, said in
# preload/README.md; before: "x=0 y=1 u=0").  --nested: X's constructor
# loads Y itself (before: "x=0 y=1 u=1" too).
gap() { # [--nested] Y: tp-gap's output
	SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" \
		LD_PRELOAD="$TP_DIR/libtp-gap-shim.so $PRELOAD_LIB" timeout 60 "$TP_DIR/tp-gap" \
		${2:+"$1"} "$TP_DIR/libtp-gap-x.so" "$TP_DIR/${2:-$1}" libtp-dep-unmarked.so 2>&1
}
for c in "needs U:libtp-race-refused.so" "does not need U:libtp-race-churn.so" \
	"nested, needs U:--nested libtp-race-refused.so"; do
	out=$(gap ${c#*:})
	expect "objects not judged yet, Y $c: X and Y refused, U not left" "$out" '^x=0 y=0 u=0$' \
		'^y refused: .*libtp-dep-unmarked\.so is not marked'
done
# Control: without the gate the same program loads the unmarked dependency.
out=$(SHSTK_ALLOWLIST="$W/al-refuse" SHSTK_EVENTS_SOCKET="$W/none.sock" LD_PRELOAD="$PRELOAD_LIB" \
	timeout 120 "$TP_DIR/tp-race" "$TP_DIR/libtp-race-refused.so" "$TP_DIR/libtp-race-churn.so" 10 2>&1)
expect "dlopen race, control without the gate" "$out" '^iterations=10 leaked=10 '
# Without a valid allowlist there is no gate: nothing to refuse with.
out=$(gate "$W/missing" "$UNM")
expect_not "gate, no allowlist" "$out" 'type=dlopen'

# ---- an allowlist truncated in place under running processes (issue 17) ----
# A process with a shadow stack (forced here with SHSTK_PRELOAD_GATE_TEST)
# looks the allowlist up again at every dlopen.  An administrator's
# '> allowlist' or a full disk cuts the file short in place; a mapping of it
# then raises SIGBUS (exit 135) on the next lookup.  Nothing may be mapped.
trunc_check() { # DESC DIR: every process exited 0 and loaded the plugin
	local desc=$1 dir=$2 bad=0 f
	for f in "$dir"/*.rc; do
		if [ "$(cat "$f")" != 0 ] || ! grep -q "^ok $MRK value=42" "${f%.rc}.out"; then
			bad=$((bad + 1))
			[ $bad -le 3 ] && echo "# $desc: ${f##*/}: exit $(cat "$f"): $(tr '\n' ' ' <"${f%.rc}.out")"
		fi
	done
	[ $bad -eq 0 ] && pass || fail "$desc: $bad of 50 processes failed (exit 135: SIGBUS)"
}
al_write "$W/al-big-mrk" "${others[@]}" "audit build-id:$mrk_id" || exit 1
[ "$(stat -c %s "$W/al-big-mrk")" -gt 4096 ] && pass || fail "al-big-mrk is not larger than the read buffer"
cp "$W/al-big-mrk" "$W/al-live"
# 1. Deterministic: all 50 start and wait, the file is cut to nothing, then they dlopen.
mkdir "$W/trunc1"
for ((i = 0; i < 50; i++)); do
	(TP_DLOPEN_WAIT="$W/trunc1/go" SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-live" \
		SHSTK_EVENTS_SOCKET="$W/none.sock" LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "$MRK" \
		>"$W/trunc1/$i.out" 2>&1; echo $? >"$W/trunc1/$i.rc") &
done
all_waiting() { [ "$(cat "$W"/trunc1/*.out 2>/dev/null | grep -c '^waiting$')" = 50 ]; }
wait_for 60 all_waiting || fail "truncation: the 50 processes did not all start"
: >"$W/al-live"
touch "$W/trunc1/go"
wait
trunc_check "truncated after start" "$W/trunc1"
# 2. Racing: the file is cut and rewritten in place, over and over, while 50 start and dlopen.
cp "$W/al-big-mrk" "$W/al-live"
mkdir "$W/trunc2"
(while [ ! -e "$W/trunc2/stop" ]; do : >"$W/al-live"; cat "$W/al-big-mrk" >"$W/al-live"; done) &
cutter=$!
for ((i = 0; i < 50; i++)); do
	(SHSTK_PRELOAD_GATE_TEST=1 SHSTK_ALLOWLIST="$W/al-live" SHSTK_EVENTS_SOCKET="$W/none.sock" \
		LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "$MRK" "$MRK" "$MRK" \
		>"$W/trunc2/$i.out" 2>&1; echo $? >"$W/trunc2/$i.rc") &
done
for ((i = 0; i < 50; i++)); do wait_for 60 test -s "$W/trunc2/$i.rc" || break; done
touch "$W/trunc2/stop"
wait
trunc_check "truncated while starting" "$W/trunc2"
# Nothing is mapped at all, not even for a moment.
out=$(SHSTK_ALLOWLIST="$W/al-big" LD_PRELOAD="$PRELOAD_LIB" strace -qq -e trace=mmap,openat "$PROBE" 2>&1)
expect "large allowlist, read" "$out" 'source=allowlist'
n=$(grep -c 'al-big' <<<"$out")
[ "$n" = 1 ] && pass || fail "large allowlist: opened $n times, expected once: $out"
expect_not "large allowlist, never mapped" "$(grep -A1 'al-big' <<<"$out")" '^mmap\(NULL, [0-9]+, PROT_READ, MAP_PRIVATE, 3, 0\)'
# Anything but a regular file is refused without being opened (a device's open() can act).
out=$(SHSTK_ALLOWLIST=/dev/null LD_PRELOAD="$PRELOAD_LIB" strace -qq -e trace=openat "$PROBE" 2>&1)
expect "device as allowlist" "$out" 'source=bad-allowlist'
expect_not "device as allowlist: never opened" "$out" 'openat\(.*"/dev/null"'

# ---- output and exit status identical with and without the preload ----
cat >"$W/prog.sh" <<EOF
/bin/true
/bin/false
/bin/ls -la /usr
sh -c 'echo out; echo err >&2; exit 7'
$TP_DIR/tp-threads
sh -c 'sh -c "echo nested; /bin/ls / >/dev/null; exit 3"; echo \$?'
$TP_DIR/tp-dlopen $TP_DIR/libtp-plugin-unmarked.so $TP_DIR/libtp-plugin-marked.so $W/nonexistent.so libtp-loader.so $TP_DIR/libtp-loader.so
sh -c 'kill -TERM \$\$'
EOF
{
	echo "--allow-overrides"
	for p in /bin/true /bin/false /bin/ls /bin/sh "$TP_DIR/tp-threads" "$TP_DIR/tp-dlopen"; do
		echo "enforce exe:$(readlink -f "$p") ignore-marking"
	done
} >"$W/list"
al_write "$W/al-all" --from <(tail -n +2 "$W/list") --allow-overrides || exit 1
cp "$W/al-small" "$W/al-corrupt" && printf 'x' | dd of="$W/al-corrupt" bs=1 seek=100 conv=notrunc 2>/dev/null
states="missing:$W/missing listed:$W/al-all corrupt:$W/al-corrupt override:$W/al-ovr"
ncmp=0
while IFS= read -r cmd; do
	(cd "$W" && eval "$cmd") >"$W/base.out" 2>"$W/base.err"
	base_rc=$?
	for st in $states; do
		name=${st%%:*}
		al=${st#*:}
		(cd "$W" && SHSTK_ALLOWLIST=$al SHSTK_POLICY=enforce SHSTK_EVENTS_SOCKET=$W/none.sock \
			LD_PRELOAD="$PRELOAD_LIB" eval "$cmd") >"$W/pre.out" 2>"$W/pre.err"
		rc=$?
		ncmp=$((ncmp + 1))
		if [ $rc = $base_rc ] && cmp -s "$W/base.out" "$W/pre.out" && cmp -s "$W/base.err" "$W/pre.err"; then
			pass
		else
			fail "[$name] '$cmd': rc $rc vs $base_rc, or output differs:"
			diff "$W/base.out" "$W/pre.out" | head -5
			diff "$W/base.err" "$W/pre.err" | head -5
		fi
	done
done <"$W/prog.sh"
echo "# identical-output comparisons: $ncmp"
# The dlopen program really exercised what it should (the loader finds its sibling by RUNPATH).
out=$(cd "$W" && LD_PRELOAD="$PRELOAD_LIB" "$TP_DIR/tp-dlopen" "$TP_DIR/libtp-plugin-unmarked.so" "$TP_DIR/libtp-loader.so" "$W/nonexistent.so")
expect "dlopen under the preload" "$out" 'ok .*libtp-plugin-unmarked.so value=42' 'ok .*libtp-loader.so value=43' \
	'fail .*nonexistent.so: cannot open shared object file'
expect_not "dlopen under the preload" "$out" 'stale dlerror'

# Every ABI's line in /etc/ld.so.preload: test_preload_abi.sh (meson tests
# preload-abi and preload-abi-exec, and the qemu-preload-abi lanes).

# ---- secure execution: a setuid-to-nobody copy run by root ----
mkdir "$W/suid" && chmod 755 "$W/suid"
cp "$TP_DIR/tp-probe-linked" "$W/suid/probe"
cp "$TP_DIR/tp-probe-linked" "$W/suid/probe-plain"
chown nobody "$W/suid/probe"
chmod 4755 "$W/suid/probe"
secenv=(SHSTK_POLICY=audit SHSTK_ALLOWLIST="$W/al-ovr" SHSTK_PRELOAD_DEBUG=1 SHSTK_EVENTS_SOCKET="$W/sec.sock")
out=$(env "${secenv[@]}" "$EVRECV" "$W/sec.sock" "$W/suid/probe" 2>"$W/sec.err")
if grep -q '^secure=1$' <<<"$out"; then
	pass
	expect "setuid: preload linked in" "$out" '^preload=present$'
	expect "setuid: environment ignored" "$(grep -m1 '^event' <<<"$out")" 'flags=secure' 'override-ignored'
	expect_not "setuid: environment ignored" "$out" 'source=override' 'gen=5'
	n=$(grep -c '^event' <<<"$out")
	[ "$n" = 1 ] && pass || fail "setuid: the event went to the test socket (SHSTK_EVENTS_SOCKET honoured)"
	[ ! -s "$W/sec.err" ] && pass || fail "setuid: debug output on stderr: $(cat "$W/sec.err")"
else
	fail "setuid copy does not run in secure-execution mode (nosuid /tmp?): $out"
fi
out=$(env "${secenv[@]}" "$EVRECV" "$W/sec.sock" "$W/suid/probe-plain" 2>"$W/plain.err")
expect "control: same binary, not setuid" "$out" '^secure=0$' 'source=override' 'gen=5'
n=$(grep -c '^event' <<<"$out")
[ "$n" = 2 ] && pass || fail "control: $n events, expected the probe's own and one received"
expect "control: debug on stderr" "$(cat "$W/plain.err")" '^shstk-preload: '

echo "# $checks checks, $fails failed"
[ $fails -eq 0 ]
