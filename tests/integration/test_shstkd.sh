#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the real shstkd on the host (no CET needed):
#  1. Type=notify: READY=1 arrives on NOTIFY_SOCKET only after the database
#     is open and the allowlist published;
#  2. a "control protection" line injected into /dev/kmsg (which the kernel
#     gives the user facility) is ignored: no violation row;
#  3. the real preload announces /bin/true on the event socket: a run row
#     appears and is ended when the process exits;
#  4. SIGHUP with an invalid policy: the error names file:line, the daemon
#     keeps running with the old policy;
#  5. kill -9 at random moments while it re-decides and publishes, and of a
#     concurrent `shstkctl scan`, 100 rounds: PRAGMA integrity_check is ok,
#     no committed run is lost, the allowlist always verifies;
#  6. a real core (gcore) passes through shstk-coredump byte for byte;
#  7. the core_pattern hook round trip restores the pattern exactly.
set -eu
d="$SHSTK_BUILDDIR/auditd/shstkd"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
pl="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
[ -x "$d" ] || { echo "SKIP: $d is not built"; exit 77; }
[ -x "$ctl" ] || { echo "SKIP: $ctl is not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 (for the notify socket) missing"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 missing"; exit 77; }

w=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
	rm -rf "$w"
}
trap cleanup EXIT
fail=0
db="$w/shstk.db"
al="$w/allowlist"
ev="$w/events"
pol="$w/policy.conf"

# A notify listener that prints each message with a stamp of what existed then.
cat >"$w/notify.py" <<'EOF'
import os, socket, sys
path, al, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
with open(out, "w") as f:
    while True:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            break
        f.write("%s allowlist=%s\n" % (m.replace("\n", "|"), os.path.exists(al)))
        f.flush()
        if "STOPPING=1" in m:
            break
EOF
python3 "$w/notify.py" "$w/notify" "$al" "$w/notify.log" &
npid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$w/notify" ] && break; sleep 0.1; done

start() {
	NOTIFY_SOCKET=$1 "$d" -c "$pol" --db "$db" --allowlist "$al" --events-socket "$ev" >>"$w/shstkd.log" 2>&1 &
	pid=$!
}
wait_ready() {
	for _ in $(seq 100); do
		grep -q READY=1 "$w/notify.log" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# 1. notify
start "$w/notify"
if wait_ready && grep -q 'READY=1.*allowlist=True' "$w/notify.log"; then
	echo "ok: READY=1 after the allowlist was published"
else
	echo "FAIL: no READY=1 (or before publication)"; cat "$w/notify.log" "$w/shstkd.log"; fail=1
fi
for _ in $(seq 50); do [ -S "$ev" ] && break; sleep 0.05; done

# 2. spoofed kernel line
if [ -w /dev/kmsg ]; then
	echo '<0>t_ok[28] control protection ip:7f83909058e0 sp:7ffe6ff8c988 ssp:7f83907f8fc0 error:1(near ret) in libc.so.6[1098e0,7f8390822000+156000]' >/dev/kmsg
	echo '<12>t_ok[29] control protection ip:7f83909058e0 sp:7ffe6ff8c988 ssp:7f83907f8fc0 error:1(near ret)' >/dev/kmsg
	sleep 0.5
	n=$(sqlite3 "$db" 'select count(*) from violations')
	if [ "$n" = 0 ]; then
		echo "ok: injected /dev/kmsg lines are ignored"
	else
		echo "FAIL: $n violation(s) from injected kmsg lines"; fail=1
	fi
else
	echo "SKIP(part): /dev/kmsg not writable, spoofing not tested"
fi

# 3. the real preload's datagram
if [ -f "$pl" ]; then
	SHSTK_EVENTS_SOCKET="$ev" SHSTK_ALLOWLIST="$al" LD_PRELOAD="$pl" /bin/true
	SHSTK_EVENTS_SOCKET="$ev" SHSTK_ALLOWLIST="$al" LD_PRELOAD="$pl" /bin/sh -c 'exit 3' || true
	sleep 0.5
	# exe_path is read from /proc/PID/exe and may be gone already for a
	# process as short as true(1); the identity (build-id) never is.
	t_id=build-id:$(readelf -n /usr/bin/true | sed -n 's/.*Build ID: //p')
	rows=$(sqlite3 "$db" "select identity, source, ended_us is not null from runs order by id")
	if echo "$rows" | grep -q "^$t_id|preload|1\$" && [ "$(echo "$rows" | grep -c '|preload|1$')" = 2 ]; then
		echo "ok: preload datagrams became ended runs"
	else
		echo "FAIL: runs table: $rows"; fail=1
	fi
	# A forged datagram (wrong magic, short) is dropped without harm.
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM); s.sendto(b'SHEV\x01'+b'\xff'*50, sys.argv[1]); s.sendto(b'XXXX'*26, sys.argv[1])" "$ev"
	sleep 0.2
	kill -0 "$pid" || { echo "FAIL: shstkd died on a forged datagram"; fail=1; }
else
	echo "SKIP(part): preload not built"
fi

# 4. SIGHUP with a bad policy
printf '[policy]\nstage = sideways\n' >"$pol"
kill -HUP "$pid"
sleep 0.5
if kill -0 "$pid" && grep -q "$pol:2:" "$w/shstkd.log"; then
	echo "ok: invalid policy rejected with its line, daemon alive"
else
	echo "FAIL: bad policy handling"; cat "$w/shstkd.log"; fail=1
fi
rm -f "$pol"
kill -TERM "$pid"
wait "$pid" || { echo "FAIL: shstkd exited $? on SIGTERM"; fail=1; }
pid=
wait "$npid" 2>/dev/null || true
grep -q STOPPING=1 "$w/notify.log" || { echo "FAIL: no STOPPING=1"; fail=1; }

# 4b. WATCHDOG_USEC: pings at half the interval (and only then a timer).
python3 "$w/notify.py" "$w/notify2" "$al" "$w/notify2.log" &
npid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$w/notify2" ] && break; sleep 0.1; done
WATCHDOG_USEC=400000 NOTIFY_SOCKET="$w/notify2" "$d" -c "$pol" --db "$db" --allowlist "$al" \
	--events-socket "$ev" --no-kmsg --no-audit >>"$w/shstkd.log" 2>&1 &
pid=$!
sleep 1.5
kill -TERM "$pid"
wait "$pid" || true
pid=
wait "$npid" 2>/dev/null || true
pings=$(grep -c WATCHDOG=1 "$w/notify2.log" || true)
if [ "$pings" -ge 4 ]; then
	echo "ok: $pings WATCHDOG=1 pings in 1.5 s (interval 0.4 s)"
else
	echo "FAIL: $pings watchdog pings"; fail=1
fi

# 5. kill -9 rounds.  Something to decide: a scan of a few real binaries.
"$ctl" --quiet --db "$db" scan --no-progress --no-packages /usr/bin/true /usr/bin/env /usr/bin/dash >/dev/null 2>&1 || true
runs0=$(sqlite3 "$db" 'select count(*) from runs')
bad=0
for i in $(seq 100); do
	rm -f "$ev" # a killed daemon leaves its socket behind
	start ""
	for _ in $(seq 40); do [ -S "$ev" ] && break; sleep 0.01; done
	# Re-decide and publish repeatedly; a run announcement now and then.
	for _ in 1 2 3; do kill -USR1 "$pid" 2>/dev/null || true; done
	if [ $((i % 10)) = 0 ] && [ -f "$pl" ]; then
		SHSTK_EVENTS_SOCKET="$ev" SHSTK_ALLOWLIST="$al" LD_PRELOAD="$pl" /bin/true
		sleep 0.05
	fi
	if [ $((i % 4)) = 0 ]; then
		"$ctl" --quiet --db "$db" scan --no-progress --no-packages /usr/bin/true /usr/bin/env >/dev/null 2>&1 &
		spid=$!
	else
		spid=
	fi
	sleep "0.$(shuf -i 0-150 -n 1 | xargs printf '%03d')"
	kill -9 "$pid" 2>/dev/null || true
	[ -n "$spid" ] && kill -9 "$spid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ -n "$spid" ] && { wait "$spid" 2>/dev/null || true; }
	pid=
	ic=$(sqlite3 "$db" 'pragma integrity_check' 2>&1)
	runs=$(sqlite3 "$db" 'select count(*) from runs' 2>&1)
	if [ "$ic" != ok ] || [ "$runs" -lt "$runs0" ]; then
		echo "FAIL: round $i: integrity '$ic', runs $runs < $runs0"; bad=1; break
	fi
	runs0=$runs
	if [ -e "$al" ] && ! "$ctl" allowlist dump "$al" >/dev/null 2>&1; then
		echo "FAIL: round $i: allowlist does not verify"; bad=1; break
	fi
done
if [ "$bad" = 0 ]; then
	echo "ok: 100 kill -9 rounds: integrity ok, $runs0 runs kept, allowlist valid"
else
	fail=1
fi

# 6. A real core (gdb's gcore of a live process) through shstk-coredump:
#    passed on byte for byte to a pipe handler; no SEGV_CPERR, no violation.
helper="$SHSTK_BUILDDIR/auditd/shstk-coredump"
if command -v gcore >/dev/null && [ -x "$helper" ]; then
	sleep 30 &
	victim=$!
	if gcore -o "$w/real" "$victim" >/dev/null 2>&1; then
		echo "|/bin/dd of=$w/passed.%P.%s status=none" >"$w/saved"
		nv0=$(sqlite3 "$db" 'select count(*) from violations')
		SHSTK_COREDUMP_SAVED="$w/saved" SHSTK_COREDUMP_DB="$db" SHSTK_COREDUMP_PIDFILE=/nonexistent \
			"$helper" "$victim" "$victim" "$victim" "$victim" 0 0 1 11 "$(date +%s)" 0 host sleep sleep '!usr!bin!sleep' 0 \
			<"$w/real.$victim"
		nv1=$(sqlite3 "$db" 'select count(*) from violations')
		if cmp -s "$w/real.$victim" "$w/passed.$victim.11" && [ "$nv0" = "$nv1" ]; then
			echo "ok: a real core ($(stat -c %s "$w/real.$victim") bytes) passed on unchanged, no violation"
		else
			echo "FAIL: real core not passed on unchanged (or a violation recorded: $nv0 -> $nv1)"; fail=1
		fi
	else
		echo "SKIP(part): gcore could not dump a process"
	fi
	kill "$victim" 2>/dev/null || true
else
	echo "SKIP(part): gcore or shstk-coredump missing"
fi

# 7. --install-coredump-hook / --remove-coredump-hook on the real
#    core_pattern, restored by a trap whatever happens.
cp_file=/proc/sys/kernel/core_pattern
if [ "$(id -u)" = 0 ] && [ -w "$cp_file" ]; then
	orig=$(cat "$cp_file")
	made_state=
	[ -d /var/lib/shstk-policy ] || { mkdir -p /var/lib/shstk-policy; made_state=1; }
	restore() {
		printf '%s\n' "$orig" >"$cp_file"
		rm -f /var/lib/shstk-policy/core_pattern.saved
		[ -n "$made_state" ] && rmdir /var/lib/shstk-policy 2>/dev/null
		cleanup
	}
	trap restore EXIT
	"$d" -c "$pol" --db "$db" --install-coredump-hook >/dev/null
	hooked=$(cat "$cp_file")
	"$d" -c "$pol" --db "$db" --remove-coredump-hook >/dev/null
	now=$(cat "$cp_file")
	case $hooked in
	"|"*shstk-coredump" %P "*) ok_hook=1 ;;
	*) ok_hook= ;;
	esac
	if [ -n "$ok_hook" ] && [ "$now" = "$orig" ]; then
		echo "ok: core-dump hook installed ($hooked) and '$orig' restored exactly"
	else
		echo "FAIL: hook round trip: hooked '$hooked', now '$now', was '$orig'"; fail=1
	fi
else
	echo "SKIP(part): not root, core_pattern round trip not tested"
fi
exit $fail
