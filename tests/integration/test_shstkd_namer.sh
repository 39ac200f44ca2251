#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# shstkd names a violation's functions in a child process (auditd/shstkd.c,
# namer_start) and goes on following processes meanwhile.  The regression
# test of the crash the emulator lanes found (issue 19): the child is forked
# without exec and holds a copy of every descriptor the daemon had, pidfds
# included; a followed process that ended while the child ran had its pidfd
# closed and its watch freed, but epoll forgets a file only at its last
# close, so the pidfd stayed in the set and the next epoll_wait() handed the
# freed watch back: SIGSEGV (exit 139 in bochs-shstkd, systemd restarts in
# bochs-e2e).
#
# Here the child is kept in flight by a debuginfod "server" that accepts and
# never answers (the case the child exists for), a violation comes in by
# the audit path (tests/tools/audit-feed.so stands in for the kernel's
# netlink socket: no host kernel makes a control-protection record; one in
# the kernel series v2's layout and one in v3's, and a malformed v3 one), a
# followed shell ends while the child waits, and the daemon must live on:
# record the next run and its end; and at SIGTERM end the child and exit 0.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
d="$SHSTK_BUILDDIR/auditd/shstkd"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
pl="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
feed="$SHSTK_BUILDDIR/tests/tools/audit-feed.so"
target="$SHSTK_BUILDDIR/tests/tools/symbols-target"
for f in "$d" "$ctl" "$pl" "$feed" "$target"; do
	[ -f "$f" ] || missing "$f" "run through meson test, which builds it"
done
need_cmd python3
need_cmd sqlite3
need_cmd objcopy binutils
need_cmd readelf binutils
unset JOURNAL_STREAM WATCHDOG_USEC WATCHDOG_PID NOTIFY_SOCKET DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH || true

w=$(mktemp -d)
pid=
spid=
hpid=
cleanup() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
	[ -z "$spid" ] || kill "$spid" 2>/dev/null || true
	[ -z "$hpid" ] || kill "$hpid" 2>/dev/null || true
	rm -rf "$w"
}
trap cleanup EXIT
exit_on_signals
fail=0
db="$w/shstk.db"
al="$w/allowlist"
ev="$w/events"
count() { sqlite3 "$db" "$1"; }
at_least() { [ "$(count "$1")" -ge "$2" ]; }
has() { grep -q -- "$1" "$2" 2>/dev/null; }
alive() { kill -0 "$pid" 2>/dev/null; }
shstkd_confine "$w"

# The program the violation names: stripped, its symbols nowhere, so that
# the child asks the debuginfod server.
cp "$target" "$w/full"
objcopy --strip-all "$w/full" "$w/victim"
# The file offset of shstk_symtest_alpha+3, through the PT_LOAD that maps it
# (what the kernel reports).
v=$(readelf -sW "$w/full" | awk '$8 == "shstk_symtest_alpha" { print $2; exit }')
[ -n "$v" ] || { echo "FAIL: no shstk_symtest_alpha in $target"; exit 1; }
ip_off=$(readelf -lW "$w/full" | while read -r t off va _pa fsz _rest; do
	[ "$t" = LOAD ] || continue
	if [ $((0x$v)) -ge $((va)) ] && [ $((0x$v)) -lt $((va + fsz)) ]; then
		printf '0x%x\n' $((0x$v - va + off + 3))
		break
	fi
done)
[ -n "$ip_off" ] || { echo "FAIL: no segment maps shstk_symtest_alpha"; exit 1; }

# A server that accepts and never answers: the child waits on it until it
# goes (DEBUGINFOD_TIMEOUT is raised beyond this test's bounds).
cat >"$w/stall.py" <<'EOF'
import os, selectors, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def say(what):
    with open(sys.argv[2], "a") as f:
        f.write(what + "\n")
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if key.fileobj is s:
            c, _ = s.accept()
            sel.register(c, selectors.EVENT_READ)
            say("accepted")
        elif not key.fileobj.recv(65536):  # the request is read, never answered
            sel.unregister(key.fileobj)
            key.fileobj.close()
            say("closed")
EOF
python3 "$w/stall.py" "$w/port" "$w/stall.log" &
spid=$!
wait_for 20 test -s "$w/port" || { echo "FAIL: the stalling server did not start"; exit 1; }
port=$(cat "$w/port")

# The shell held below announces itself through the real preload: it is
# listed audit in an allowlist of the test's own.
pal="$w/preload-allowlist"
"$ctl" allowlist write -o "$pal" --generation 1 "audit exe:$(readlink -f /bin/sh)" >/dev/null ||
	{ echo "FAIL: cannot write $pal"; exit 1; }
"$ctl" --quiet --db "$db" scan --no-progress --no-packages "$(readlink -f /bin/sh)" >/dev/null 2>&1 ||
	{ echo "FAIL: scan of /bin/sh"; exit 1; }

# gcc's libasan must come first in the library list; the feed is not sanitized.
# shellcheck disable=SC2086
$confine env LD_PRELOAD="$feed" SHSTK_TEST_AUDIT_FEED="$w/audit.sock" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$w/dcache" \
	DEBUGINFOD_TIMEOUT=600 DEBUGINFOD_MAXTIME=600 \
	"$d" -c "$w/no-policy.conf" --db "$db" --allowlist "$al" --events-socket "$ev" --no-kmsg \
	>"$w/shstkd.log" 2>&1 &
pid=$!
wait_for 30 has watching "$w/shstkd.log" || { echo "FAIL: shstkd not watching"; cat "$w/shstkd.log"; exit 1; }
if has "cannot be loaded" "$w/shstkd.log"; then
	missing "libdebuginfod.so.1" "apt-get install libdebuginfod1"
fi
wait_for 10 test -S "$w/audit.sock" || { echo "FAIL: no fed audit socket"; cat "$w/shstkd.log"; exit 1; }

held_dir="$w/nb"
hold() { held "$held_dir" root "$1" "$ev" "$pal" "$pl"; }

# 1. A followed process, alive.
hold 0
first=$hpid
wait_for 30 at_least "select count(*) from runs where pid = $first" 1 ||
	{ echo "FAIL: the held shell's run was not recorded"; cat "$w/shstkd.log"; exit 1; }

# 2. A violation of the stripped program, as the kernel's record says it
#    (kernel patch 0001 names the object and offset): the child starts
#    naming once the allowlist is published, and waits on the server.
python3 - "$w/audit.sock" "$w/victim" "$ip_off" <<'EOF'
import socket, struct, sys, time
path, exe, off = sys.argv[1:]
t = time.time()
text = ('audit(%d.%03d:77): auid=0 uid=0 gid=0 ses=1 pid=4242 comm="victim" exe="%s" tid=4242 '
        'ip=0x7f0000001234 sp=0x7ffc00000000 ssp=0x7f0000fff000 error=0x1 kind="near ret" '
        'ip_file="%s" ip_off=%s shstk_mode=audit shstk_action=resync count=1'
        % (int(t), int(t * 1000) % 1000, exe, exe, off)).encode()
msg = struct.pack("=IHHII", 16 + len(text), 1704, 0, 77, 0) + text
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(msg, path)
EOF
if wait_for 30 at_least "select count(*) from violations where pid = 4242" 1; then
	echo "ok: the fed violation was recorded"
else
	echo "FAIL: the fed violation was not recorded"; cat "$w/shstkd.log"; fail=1
fi

# 2b. The same kind of record in the kernel series v3's layout (issue 29
#     point 3: every field, "?" where unknown, kind=near_ret), recorded as
#     v2's is; and a malformed one (target=?x) refused and logged.
python3 - "$w/audit.sock" "$w/victim" "$ip_off" <<'EOF'
import socket, struct, sys, time
path, exe, off = sys.argv[1:]
t = time.time()
def send(serial, pid, fields):
    text = ('audit(%d.%03d:%d): auid=0 uid=0 gid=0 ses=1 pid=%d comm="victim" exe="%s" tid=%d '
            'ip=0x7f0000005678 sp=0x7ffc00000100 ssp=0x7f0000ffe000 error=0x1 %s'
            % (int(t), int(t * 1000) % 1000, serial, pid, exe, pid, fields)).encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(struct.pack("=IHHII", 16 + len(text), 1704, 0, serial, 0) + text, path)
v3 = ('kind=near_ret target=0x7f0000009abc expected=0x7f0000002000 ip_file="%s" ip_off=%s '
      'target_file=? target_off=? expected_file=? expected_off=? shstk_mode=audit shstk_action=resync '
      'count=1 count_scope=site' % (exe, off))
send(78, 4244, v3)
send(79, 4245, v3.replace('target=0x7f0000009abc', 'target=?x'))
EOF
v3row="near ret|audit|continued|$w/victim|$((ip_off))|$((0x7f0000002000))||1"
got=
if wait_for 30 at_least "select count(*) from violations where pid = 4244" 1; then
	got=$(count "select kind, mode, action, ip_object, ip_offset, ret_addr, ret_object, sources & 1 from violations where pid = 4244")
fi
if [ "$got" = "$v3row" ]; then
	echo "ok: the v3 record was recorded as the kernel said it: $got"
else
	echo "FAIL: the v3 record's row: '${got:-none}', want '$v3row'"; cat "$w/shstkd.log"; fail=1
fi
if wait_for 30 has "bad record of type 1704" "$w/shstkd.log" &&
	[ "$(count "select count(*) from violations where pid = 4245")" = 0 ]; then
	echo "ok: the malformed v3 record was refused and logged"
else
	echo "FAIL: the malformed v3 record (target=?x) was not refused"; cat "$w/shstkd.log"; fail=1
fi
if wait_for 60 has accepted "$w/stall.log"; then
	echo "ok: the naming child asks the (silent) debuginfod server"
else
	echo "FAIL: the naming child never asked the server"; cat "$w/shstkd.log"; fail=1
fi

# 3. The followed shell ends while the child waits: its pidfd is closed in
#    the daemon and open in the child.
release "$held_dir"
hpid=
if wait_for 30 at_least "select count(*) from runs where pid = $first and ended_us is not null" 1; then
	echo "ok: the first run's end was recorded while the child named"
else
	echo "FAIL: the first run's end was not recorded"; fail=1
fi

# 4. The daemon lives on: a second run, and its end, with the child still
#    in flight.
if alive; then
	hold 5
	second=$hpid
	if wait_for 30 at_least "select count(*) from runs where pid = $second" 1; then
		release "$held_dir"
		hpid=
		if wait_for 30 at_least "select count(*) from runs where pid = $second and ended_us is not null" 1 &&
			[ "$(count "select exit_status from runs where pid = $second")" = 5 ]; then
			echo "ok: the next run and its end (status 5) recorded"
		else
			echo "FAIL: the second run's end was not recorded"; fail=1
		fi
	else
		echo "FAIL: the second run was not recorded"; fail=1
		release "$held_dir"
	fi
fi
if alive; then
	echo "ok: shstkd alive after a followed process ended during the naming"
else
	rc=0
	wait "$pid" || rc=$?
	pid=
	echo "FAIL: shstkd died (exit status $rc) after a followed process ended during the naming"
	tail -20 "$w/shstkd.log"
	exit 1
fi

# 5. SIGTERM while the child still waits on the server: the daemon ends it
#    (its violations stay unnamed) and exits 0.
# Bounded: a daemon that hangs at exit fails here, it does not hang the test
# (a zombie still answers kill -0: its state says it is gone).
gone() { ! kill -0 "$pid" 2>/dev/null || grep -q '^[0-9]* ([^)]*) Z' "/proc/$pid/stat" 2>/dev/null; }
kill -TERM "$pid"
rc=0
if wait_for 30 gone; then
	wait "$pid" || rc=$?
else
	rc="none: still running 30 s after SIGTERM"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
fi
pid=
if [ "$rc" = 0 ] && has "left without function names" "$w/shstkd.log"; then
	echo "ok: SIGTERM during the naming: exit 0, the batch left unnamed"
else
	echo "FAIL: SIGTERM during the naming: exit status $rc"; tail -5 "$w/shstkd.log"; fail=1
fi
if wait_for 30 has closed "$w/stall.log"; then
	echo "ok: the naming child went with the daemon"
else
	echo "FAIL: the naming child outlived the daemon"; fail=1
fi
got=$(count "select count(*) from violations where pid = 4242 and ip_symbol is null")
[ "$got" = 1 ] && echo "ok: the violation kept its offset, unnamed" || { echo "FAIL: violation rows unnamed: $got"; fail=1; }
exit $fail
