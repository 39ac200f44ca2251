#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the real shstkd on the host (no CET needed), confined to a temporary
# directory: its own policy file, --db, --allowlist, --events-socket and
# notify socket; it writes nothing anywhere else and changes nothing on the
# machine.
#  1. Type=notify: READY=1 arrives on NOTIFY_SOCKET only after the database
#     is open and the allowlist published;
#  2. starts are the kernel's word, not the datagram's (issue 14): the real
#     preload's announcement becomes a run with the identity, mode and uid
#     the kernel shows and the exit status the proc connector reports;
#     `nobody` claiming another binary's build-id, or a shadow stack the
#     kernel does not show, is counted as forged and records nothing;
#     malformed datagrams are dropped; the per-uid limit drops a flood;
#  3. SIGHUP with an invalid policy: the error names file:line, the daemon
#     keeps running with the old policy; SIGTERM: STOPPING=1, exit 0;
#  4. WATCHDOG_USEC: WATCHDOG=1 pings arrive, and the timer is armed for
#     half the interval (sd_notify(3));
#  5. kill -9 at random moments while it re-decides and publishes, and of a
#     concurrent `shstkctl scan`, 100 rounds: PRAGMA integrity_check is ok,
#     no committed run is lost, the allowlist always verifies.
# What needs root and changes the machine (a forged line in the kernel log,
# the core-dump helper on real cores, the core_pattern round trip) is checked
# in the guest of the qemu-shstkd lane: tests/shstkd-emu/payload/run.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
d="$SHSTK_BUILDDIR/auditd/shstkd"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
pl="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
for f in "$d" "$ctl" "$pl"; do
	[ -f "$f" ] || missing "$f" "ninja -C $SHSTK_BUILDDIR"
done
need_cmd python3
need_cmd sqlite3
need_cmd readelf binutils
grep -q '^#define HAVE_SYSTEMD 1' "$SHSTK_BUILDDIR/config.h" ||
	missing "shstkd built with libsystemd (notify, watchdog)" "apt-get install libsystemd-dev; meson setup --wipe"
# Under systemd (a CI unit) stderr may be a journal stream: the daemon would
# log to the journal, not to our log files.
unset JOURNAL_STREAM WATCHDOG_USEC WATCHDOG_PID NOTIFY_SOCKET

w=$(mktemp -d)
pid=
npid=
cleanup() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
	[ -z "$npid" ] || kill "$npid" 2>/dev/null || true
	rm -rf "$w"
}
trap cleanup EXIT
exit_on_signals
fail=0
db="$w/shstk.db"
al="$w/allowlist"
ev="$w/events"
pol="$w/policy.conf"

shstkd_confine "$w"

# A notify listener that prints each message with a stamp of what existed then.
cat >"$w/notify.py" <<'EOF'
import os, socket, sys
path, al, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
# Only a bound against a test that never stops its daemon: the daemon says
# nothing for minutes at a time (item 1 on a loaded machine, ASan builds),
# and a listener that left at 60 s of silence missed STOPPING=1.
s.settimeout(1800)
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
# unlisten: the listener has seen STOPPING=1 and gone (30 s at most), or is stopped
unlisten() {
	wait_for 30 sh -c "! kill -0 $npid 2>/dev/null" || kill "$npid" 2>/dev/null || true
	wait "$npid" 2>/dev/null || true
	npid=
}
# listen NAME: a listener on $w/NAME writing $w/NAME.log, $npid
listen() {
	python3 "$w/notify.py" "$w/$1" "$al" "$w/$1.log" &
	npid=$!
	wait_for 20 test -S "$w/$1" || { echo "FAIL: notify listener $1 did not bind"; exit 1; }
}
# start LOG NOTIFY_SOCKET WATCHDOG_USEC [OPTION...]: shstkd in the
# background, $pid.  (Empty variables count as unset for sd_notify(3).)
start() {
	log=$1 ns=$2 wd=$3
	shift 3
	NOTIFY_SOCKET=$ns WATCHDOG_USEC=$wd $confine "$d" -c "$pol" --db "$db" --allowlist "$al" --events-socket "$ev" "$@" \
		>>"$w/$log" 2>&1 &
	pid=$!
}
stop() {
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	pid=
	[ "$rc" = 0 ] || { echo "FAIL: shstkd exited $rc on SIGTERM"; fail=1; }
}
count() { sqlite3 "$db" "$1"; }
has() { grep -q -- "$1" "$2" 2>/dev/null; }
at_least() { [ "$(count "$1")" -ge "$2" ]; }
# The preload announces only a process in audit or enforce mode (the runs
# shstkd counts as evidence), so the shell it holds here is listed audit in
# an allowlist of the test's own (the daemon's lists nothing: dash is not
# marked SHSTK on Debian 12).
pal="$w/preload-allowlist"
"$ctl" allowlist write -o "$pal" --generation 1 "audit exe:$(readlink -f /bin/sh)" "audit exe:/usr/bin/true" \
	"audit exe:$(readlink -f /usr/bin/sleep)" "enforce exe:$(readlink -f /usr/bin/env) ignore-marking" >/dev/null ||
	{ echo "FAIL: cannot write $pal"; exit 1; }

# 1. notify
listen notify
start shstkd.log "$w/notify" ""
if wait_for 30 has READY=1 "$w/notify.log" && grep -q 'READY=1.*allowlist=True' "$w/notify.log"; then
	echo "ok: READY=1 after the allowlist was published"
else
	echo "FAIL: no READY=1 (or before publication)"; cat "$w/notify.log" "$w/shstkd.log"; fail=1
fi
wait_for 10 test -S "$ev" || { echo "FAIL: no event socket $ev"; cat "$w/shstkd.log"; exit 1; }

# 2. starts and ends from the kernel.  A held process announces itself
# through the real preload and waits on a FIFO, so that the daemon finds
# it alive (a process gone before the daemon looks leaves no kernel word
# and is not recorded: true(1) may be that quick).
chmod 711 "$w"
chmod 644 "$al"
# shstkd names what a process runs by its file: the scanned object it is.
send=$SHSTK_BUILDDIR/tests/tools/shstk-event-send
"$ctl" --quiet --db "$db" scan --no-progress --no-packages "$(readlink -f /bin/sh)" /usr/bin/true "$send" \
	"$(readlink -f /usr/bin/sleep)" "$(readlink -f /usr/bin/env)" >/dev/null 2>&1 ||
	{ echo "FAIL: scan for the runs"; fail=1; }
# What the kernel shows the held shell in audit mode: a shadow stack where
# the CPU and kernel have them, else nothing (the preload says unsupported).
if grep -qw user_shstk /proc/cpuinfo; then want_mode=audit; else want_mode=unsupported; fi
held_dir="$w/nb"
hold() { held "$held_dir" "$1" "$2" "$ev" "$pal" "$pl"; }
run_of() { count "select $2 from runs where pid = $1"; }
dash_id=build-id:$(readelf -n "$(readlink -f /bin/sh)" | sed -n 's/.*Build ID: //p')
hold root 3
if wait_for 30 at_least "select count(*) from runs where pid = $hpid" 1; then
	release "$held_dir"
	wait_for 30 at_least "select count(*) from runs where pid = $hpid and ended_us is not null" 1 || true
	got=$(run_of "$hpid" "identity, mode_applied, uid, boot_id = '$(cat /proc/sys/kernel/random/boot_id)', exit_status, exit_signal")
	if [ "$got" = "$dash_id|$want_mode|0|1|3|0" ]; then
		echo "ok: a preload announcement became a run with the kernel's identity, mode, uid, boot and exit status 3"
	else
		echo "FAIL: run of pid $hpid: '$got', want '$dash_id|unsupported|0|1|3|0'"; cat "$w/shstkd.log"; fail=1
	fi
else
	echo "FAIL: the held shell's announcement was not recorded"; cat "$w/shstkd.log"; fail=1; release "$held_dir"
fi
grep -q 'proc connector' "$w/shstkd.log" &&
	{ echo "FAIL: the proc connector did not open"; grep 'proc connector' "$w/shstkd.log"; fail=1; }
# Killed by a signal: the kernel's exit event says which.
hold nobody 0
if wait_for 30 at_least "select count(*) from runs where pid = $hpid" 1; then
	kill -TERM "$hpid"
	wait_for 30 at_least "select count(*) from runs where pid = $hpid and ended_us is not null" 1 || true
	got=$(run_of "$hpid" "uid, exit_status IS NOT NULL, exit_signal")
	if [ "$got" = "65534|1|15" ]; then
		echo "ok: nobody's run has uid 65534 and ended by SIGTERM, as the kernel reported"
	else
		echo "FAIL: nobody's run: '$got', want '65534|1|15'"; fail=1
	fi
else
	echo "FAIL: nobody's announcement was not recorded"; cat "$w/shstkd.log"; fail=1; kill "$hpid"
fi

# A user namespace whose uids are 100000-165535 outside (what /etc/subuid
# gives every user): its processes are the namespace owner's (root made it
# here), not 65 536 other users' (min-uids, the per-uid limits).  Inside,
# root's files are the overflow uid's: the preload takes an allowlist the
# caller owns (kernel uid 100000).
mkdir "$w/ns"
chmod 777 "$w/ns"
mkfifo -m 644 "$w/ns/go"
cp "$pal" "$w/ns/allowlist"
chown 100000:100000 "$w/ns/allowlist"
python3 - "$w/ns" "$ev" "$w/ns/allowlist" "$pl" <<'PY' &
import ctypes, os, sys
d, sock, al, pl = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        os._exit(1)
    os.write(w, b"x")
    os.read(r2, 1)
    os.setgid(0)
    os.setuid(0)  # uid 0 inside: 100000 outside
    env = dict(os.environ, SHSTK_EVENTS_SOCKET=sock, SHSTK_ALLOWLIST=al, LD_PRELOAD=pl)
    os.execve("/bin/sh", ["sh", "-c", 'echo $$ >"$0/pid"; read _ <"$0/go"', d], env)
os.read(r, 1)
open("/proc/%d/setgroups" % pid, "w").write("deny")
open("/proc/%d/uid_map" % pid, "w").write("0 100000 65536")
open("/proc/%d/gid_map" % pid, "w").write("0 100000 65536")
os.write(w2, b"x")
os.waitpid(pid, 0)
PY
if wait_for 10 test -s "$w/ns/pid"; then
	npid_ns=$(cat "$w/ns/pid")
	kuid=$(sed -n 's/^Uid:\t\([0-9]*\).*/\1/p' "/proc/$npid_ns/status")
	wait_for 30 at_least "select count(*) from runs where pid = $npid_ns" 1 || true
	got=$(run_of "$npid_ns" uid)
	echo >"$w/ns/go"
	if [ "$kuid" = 100000 ] && [ "$got" = 0 ]; then
		echo "ok: a process of uid $kuid in root's user namespace is root's run (uid $got)"
	else
		echo "FAIL: namespace run: kernel uid '$kuid', recorded uid '$got', want 100000 and 0"; fail=1
	fi
else
	echo "FAIL: no process in a user namespace"; fail=1
fi

# Forgeries as nobody: another binary's build-id; its own identity with
# a shadow stack the kernel does not show (this host's processes run
# without one).  Each sender stays alive until the daemon has judged it.
send_id=build-id:$(readelf -n "$send" | sed -n 's/.*Build ID: //p')
true_id=build-id:$(readelf -n /usr/bin/true | sed -n 's/.*Build ID: //p')
runs_before=$(count "select count(*) from runs")
forge() {
	mkfifo "$w/nb/f$1"
	chown nobody "$w/nb/f$1"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$send" "$ev" "$2" "$3" <"$w/nb/f$1" >"$w/nb/f$1.out" &
	exec 7>"$w/nb/f$1"
	if wait_for 30 grep -qF "it claims $2, the kernel says another $4" "$w/shstkd.log" &&
		grep -q "forged start datagram from uid 65534 pid [0-9]*: it claims $2, the kernel says another" \
		"$w/shstkd.log"; then
		echo "ok: forged $4 ($2 $3) from nobody: counted and logged"
	else
		echo "FAIL: no 'forged ... another $4' line for $2 $3"; cat "$w/shstkd.log"; fail=1
	fi
	exec 7>&-
}
forge 1 "$true_id" audit identity
forge 2 "$send_id" enforce mode
# A build-id proves nothing: anyone can write one into a file of their own.
# A copy of the sender whose note says true's build-id claims just that,
# truthfully as far as its file goes; it is no scanned object.
forge_build_id "$send" "$w/nb/fake" "${true_id#build-id:}" || fail=1
send_saved=$send
send=$w/nb/fake
forge 3 "$true_id" off "identity (an unscanned file"
send=$send_saved
if [ "$(count "select count(*) from runs")" = "$runs_before" ] &&
	[ "$(count "select count(*) from runs where identity = '$true_id'")" = 0 ]; then
	echo "ok: the forgeries recorded no run"
else
	echo "FAIL: forged datagrams became runs: $(count "select identity, uid from runs")"; fail=1
fi
# Malformed datagrams (wrong magic, short) are dropped without harm: the
# run announced after them on the same socket is still recorded.
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM); s.sendto(b'SHEV\x01'+b'\xff'*50, sys.argv[1]); s.sendto(b'XXXX'*26, sys.argv[1])" "$ev"
hold root 0
if wait_for 30 at_least "select count(*) from runs where pid = $hpid" 1 && kill -0 "$pid"; then
	echo "ok: malformed datagrams dropped, the next run recorded"
else
	echo "FAIL: after malformed datagrams: no run of $hpid, daemon $(kill -0 "$pid" 2>/dev/null && echo alive || echo dead)"
	cat "$w/shstkd.log"; fail=1
fi
release "$held_dir"
# A program in audit mode waits (25 ms at most) for the daemon to have
# looked at it: true(1), over in a millisecond, leaves a run each time,
# even where the daemon gets the CPU last (one CPU for both, the daemon
# under SCHED_IDLE: it runs only when true(1) waits, and the CPU is idle).
# Without the wait none of them was recorded.  Another process busy on
# that CPU starves the daemon for real (seen while kernels were built
# beside the tests): up to three batches of eight, one must be complete
# (24 runs stay under runs-per-identity-hour = 30).  The third waits up to
# SHSTK_PRELOAD_ACK_WAIT_MS = 10 s: under load from outside the test the
# daemon (SCHED_IDLE) may not get the CPU within 25 ms at all, and what is
# checked is that the program waits for it, which it must do either way.
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
got=
for batch in 1 2 3; do
	before=$(count "select count(*) from runs where identity = '$true_id'")
	taskset -apc "$cpu" "$pid" >/dev/null && chrt -ai -p 0 "$pid" || { echo "FAIL: cannot pin shstkd"; fail=1; }
	ackwait=
	[ $batch = 3 ] && ackwait=10000
	for _ in 1 2 3 4 5 6 7 8; do
		SHSTK_EVENTS_SOCKET=$ev SHSTK_ALLOWLIST=$pal LD_PRELOAD=$pl \
			SHSTK_PRELOAD_ACK_WAIT_MS=$ackwait taskset -c "$cpu" /usr/bin/true
	done
	chrt -ao -p 0 "$pid" && taskset -apc "$(taskset -pc $$ | sed 's/.*: *//')" "$pid" >/dev/null ||
		{ echo "FAIL: cannot unpin shstkd"; fail=1; }
	wait_for 10 at_least "select count(*) from runs where identity = '$true_id' and ended_us is not null" \
		$((before + 8)) || true
	got="$got $(count "select count(*) - $before from runs where identity = '$true_id' and uid = 0 and exit_status = 0")"
	[ "${got##* }" = 8 ] && break
done
if [ "${got##* }" = 8 ]; then
	echo "ok: eight runs of true(1) in audit mode, the daemon starved: eight runs recorded, each with its end (batches:$got${ackwait:+, the last with a wait of $ackwait ms})"
else
	echo "FAIL: true(1) in audit mode, runs recorded of 8 per batch:$got"
	tail -5 "$w/shstkd.log"; fail=1
fi
# The answer goes only to a socket pair the sender made (SCM_RIGHTS, its
# creator the sender): nobody passes a socket connected to a socket of a
# victim's, then a pair of its own; the pair is answered, the victim gets
# nothing (an answer by address went wherever the sender's address said,
# its network namespace's or a relative path under the daemon's cwd).
answers=$(python3 -c 'import os, socket, struct, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
ev, victim_path = sys.argv[1:]
def datagram(pid):
    h = struct.pack("<4sBBBBIBBBBIiQ", b"SHEV", 1, 1, 1, 0, pid, 1, 1, 1, 20, 0x10000, 0, 0)
    h += bytes(64) + struct.pack("<HB5x", 0, 0xff)
    return h
victim = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); victim.bind(victim_path)
victim.setblocking(False)
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); c.connect(victim_path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendmsg([datagram(os.getpid())], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", c.fileno()))], 0, ev)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendmsg([datagram(os.getpid())], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", b.fileno()))], 0, ev)
b.close(); a.settimeout(10)
try:
    print("pair:", a.recv(8))
except OSError as e:
    print("pair: none (%s)" % e)
try:
    print("victim:", victim.recv(8))
except BlockingIOError:
    print("victim: nothing")
' "$ev" "$w/nb/victim.sock" 2>&1)
if [ "$answers" = "$(printf "pair: b'\\x01'\nvictim: nothing")" ]; then
	echo "ok: the answer goes to the sender's own socket pair only"
else
	echo "FAIL: answers: $answers"; fail=1
fi
# A wrapper listed enforce does not wait for the look: env(1) announces
# itself and exec's sleep(1) at once, so the daemon (starved as above)
# finds sleep's image where env's was announced.  No forgery: the look
# came after an exec (counted as gone), never logged as forged.
sleep_id=build-id:$(readelf -n "$(readlink -f /usr/bin/sleep)" | sed -n 's/.*Build ID: //p')
root_sleeps="select count(*) from runs where identity = '$sleep_id' and uid = 0"
forged_before=$(grep -c "forged start datagram" "$w/shstkd.log")
sleeps_before=$(count "$root_sleeps")
taskset -apc "$cpu" "$pid" >/dev/null && chrt -ai -p 0 "$pid" || { echo "FAIL: cannot pin shstkd"; fail=1; }
for _ in 1 2 3 4 5; do
	SHSTK_EVENTS_SOCKET=$ev SHSTK_ALLOWLIST=$pal LD_PRELOAD=$pl taskset -c "$cpu" /usr/bin/env sleep 0
done
chrt -ao -p 0 "$pid" && taskset -apc "$(taskset -pc $$ | sed 's/.*: *//')" "$pid" >/dev/null ||
	{ echo "FAIL: cannot unpin shstkd"; fail=1; }
# env's datagrams came before sleep's: judged once sleep's runs are in.
wait_for 10 at_least "$root_sleeps" $((sleeps_before + 5)) || echo "# sleep's runs: $(count "$root_sleeps") of $((sleeps_before + 5))"
envs=$(grep -c "forged start datagram" "$w/shstkd.log")
if [ "$envs" = "$forged_before" ]; then
	echo "ok: env(1) exec'ing before the look: not taken for a forgery"
else
	echo "FAIL: env(1) exec'ing before the look counted as forged: $(grep "forged start datagram" "$w/shstkd.log" | tail -2)"
	fail=1
fi
# The per-uid limit (policy runs-per-identity-hour = 3): five true claims
# from one process are admitted three times (one run: the same process),
# two are dropped and counted.
printf '[promotion]\nruns-per-identity-hour = 3\n' >"$pol"
last_reason_is() {
	[ "$(count "select new_stage || ': ' || reason from stage_history order by id desc limit 1")" = "$1: $2" ]
}
# as if another kernel had booted last time and auto had chosen otherwise
other=enforce-verified
[ "$(count "select new_stage from stage_history order by id desc limit 1")" = enforce-verified ] && other=audit
count "insert into stage_history(time_us, old_stage, new_stage, user, uid, reason)
	values (1, 'audit', '$other', NULL, -1, 'test: another kernel booted before')"
kill -HUP "$pid"
wait_for 30 has "policy reloaded" "$w/shstkd.log" || { echo "FAIL: policy not reloaded"; fail=1; }
# That policy names no stage: stage auto, which shstkd resolves for this
# kernel as lib/kfeat's probe finds it (enforce-verified on a stock kernel
# with shadow stacks, audit otherwise) and says so
kfeat=$("$SHSTK_BUILDDIR/tests/tools/kfeat-probe" 2>/dev/null |
	awk '$1 == "kfeat" && ($2 == "shadow-stacks" || $2 == "audit-mode") { printf "%s ", $3 }')
want=audit
[ "$kfeat" = "present absent " ] && want=enforce-verified
wait_for 30 has "the last stage recorded was $other" "$w/shstkd.log" || true
if has "policy reloaded (stage $want)" "$w/shstkd.log" && has "stage auto: $want, as " "$w/shstkd.log" &&
	grep -q "stage auto: $want, as .*; the last stage recorded was $other (name a stage" "$w/shstkd.log" &&
	wait_for 30 last_reason_is "$want" "the policy's stage auto chose this stage for the kernel it runs on"; then
	echo "ok: the reloaded policy's stage auto is $want on this kernel, said, warned as moved from $other, recorded"
else
	echo "FAIL: stage auto not resolved to $want: $(grep -e 'policy reloaded' -e 'stage auto' "$w/shstkd.log" | tail -2)"
	fail=1
fi
mkfifo "$w/nb/flood"
"$send" "$ev" "$send_id" off 5 <"$w/nb/flood" >"$w/nb/flood.out" &
exec 7>"$w/nb/flood"
wait_for 30 grep -q "sent 5" "$w/nb/flood.out" || { echo "FAIL: flood not sent"; fail=1; }
# Datagrams are read in order: once a later announcement is recorded, the
# daemon has judged all five.  (nobody's: root has run dash three times
# this hour already, the limit.)
hold nobody 0
wait_for 30 at_least "select count(*) from runs where pid = $hpid" 1 || true
release "$held_dir"
exec 7>&-
if [ "$(count "select count(*) from runs where identity = '$send_id'")" = 1 ]; then
	echo "ok: five true claims from one process: one run"
else
	echo "FAIL: the flood's runs: $(count "select id, pid from runs where identity = '$send_id'")"; fail=1
fi
rm -f "$pol"
# One user follows at most 256 processes to their end (the daemon's fds
# are bounded): nobody's 257 sleeps are all recorded, 256 followed to the
# SIGTERM that ends them, one recorded without an end at once.  (The
# per-identity limit is lifted for it.)
printf '[promotion]\nruns-per-identity-hour = 0\n' >"$pol"
kill -HUP "$pid"
reloaded_twice() { [ "$(grep -c "policy reloaded" "$w/shstkd.log")" -ge 2 ]; }
wait_for 30 reloaded_twice || { echo "FAIL: policy not reloaded"; fail=1; }
# One at a time, each once its run is in: a burst would meet the kernel's
# default queue of 10 datagrams (net.unix.max_dgram_qlen; systemd sets 512),
# which this test is not about.
sleeps="select count(*) from runs where identity = '$sleep_id' and uid = 65534"
# Ours only (setpriv execs sleep: $! is the sleep): a pkill of nobody's
# sleeps would end those of a test running beside this one.
i=0 sleep_pids=
while [ $i -lt 257 ]; do
	i=$((i + 1))
	SHSTK_EVENTS_SOCKET=$ev SHSTK_ALLOWLIST=$pal LD_PRELOAD=$pl \
		setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600 &
	sleep_pids="$sleep_pids $!"
	wait_for 10 at_least "$sleeps" $i || break
done
kill -TERM $sleep_pids 2>/dev/null || true # one that already ended fails the kill, not the test
wait_for 60 at_least "$sleeps and ended_us is not null" 257 || true
got="$(count "$sleeps")/$(count "$sleeps and exit_signal = 15")/$(count "$sleeps and ended_us is not null and exit_status is null and exit_signal is null")"
if [ "$got" = 257/256/1 ]; then
	echo "ok: nobody's 257 processes: 257 runs, 256 followed to their SIGTERM, one not followed (its end unknown)"
else
	echo "FAIL: nobody's 257 processes: runs/ended by SIGTERM/end unknown = $got, want 257/256/1"; fail=1
fi
rm -f "$pol"
# 3. SIGHUP with a bad policy
printf '[policy]\nstage = sideways\n' >"$pol"
kill -HUP "$pid"
if wait_for 30 has "$pol:2:" "$w/shstkd.log" && grep -q 'the policy in force stays' "$w/shstkd.log" &&
	kill -0 "$pid"; then
	echo "ok: invalid policy rejected with its line, daemon alive"
else
	echo "FAIL: bad policy handling"; cat "$w/shstkd.log"; fail=1
fi
rm -f "$pol"
stop
unlisten
grep -q STOPPING=1 "$w/notify.log" || { echo "FAIL: no STOPPING=1"; cat "$w/notify.log"; fail=1; }
# What the daemon counted, in its last words.
# Two malformed datagrams were sent (step 2).
if grep -q 'start datagrams: 3 forged, [0-9]* of processes gone before they were looked at, 2 over the per-uid limits, [0-9]* of unscanned executables, 2 malformed' \
	"$w/shstkd.log"; then
	echo "ok: $(sed -n 's/.*stopping: //p' "$w/shstkd.log" | head -n 1)"
else
	echo "FAIL: counters at stop: $(grep stopping "$w/shstkd.log")"; fail=1
fi

# 4. WATCHDOG_USEC.  First: pings arrive at all (0.2 s asked for; the bound
# only keeps a daemon that never pings from hanging the test).
listen notify2
start shstkd-wd.log "$w/notify2" 200000 --no-kmsg --no-audit
pings() {
	n=$(grep -c WATCHDOG=1 "$w/notify2.log" 2>/dev/null) || true
	[ "${n:-0}" -ge 2 ]
}
if wait_for 60 pings; then
	echo "ok: WATCHDOG=1 pings with WATCHDOG_USEC set"
else
	echo "FAIL: not two WATCHDOG=1 pings in 60 s"; cat "$w/notify2.log" "$w/shstkd-wd.log"; fail=1
fi
stop
unlisten
# Then the interval: with an hour asked for, the daemon's timerfd must be
# armed for half an hour (sd_notify(3): ping at half WATCHDOG_USEC).  The
# kernel shows the time left in /proc/PID/fdinfo; what has passed since it
# was armed is at most what has passed since we started the daemon, so the
# check is exact, whatever the load.
t0=$(date +%s)
start shstkd-wd2.log "" 3600000000 --no-kmsg --no-audit
left=
if wait_for 30 has watching "$w/shstkd-wd2.log"; then
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd")" = "anon_inode:[timerfd]" ] || continue
		left=$(sed -n 's/^it_value: (\([0-9]*\), [0-9]*)$/\1/p' "/proc/$pid/fdinfo/${fd##*/}")
	done
fi
elapsed=$(($(date +%s) - t0))
# left is whole seconds, rounded down; both date stamps too: 2 s of slack.
if [ -n "$left" ] && [ "$left" -lt 1800 ] && [ $((left + elapsed + 2)) -ge 1800 ]; then
	echo "ok: watchdog timer armed for ${left}s of the 1800s (half of WATCHDOG_USEC) after ${elapsed}s"
else
	echo "FAIL: watchdog timer left '${left:-none}' s ${elapsed}s after start, want half of 3600 s"
	cat "$w/shstkd-wd2.log"; fail=1
fi
stop

# 5. kill -9 rounds.  Something to decide: a scan of a few real binaries.
"$ctl" --quiet --db "$db" scan --no-progress --no-packages /usr/bin/true /usr/bin/env /usr/bin/dash >/dev/null 2>&1 || true
runs0=$(count 'select count(*) from runs')
bad=0
for i in $(seq 100); do
	rm -f "$ev" # a killed daemon leaves its socket behind
	start shstkd.log "" ""
	if ! wait_for 30 test -S "$ev"; then
		echo "FAIL: round $i: no event socket"; tail "$w/shstkd.log"
		# Where the daemon waits, and who holds what, for the next reader.
		echo "# wchan $(cat /proc/$pid/wchan 2>&1), state $(sed -n 's/^State:\t//p' /proc/$pid/status 2>&1)"
		cat /proc/$pid/stack 2>/dev/null | sed 's/^/# stack /'
		ls -l /proc/$pid/fd 2>&1 | sed 's/^/# fd /'
		sed 's/^/# lock /' /proc/locks
		bad=1; break
	fi
	# Re-decide and publish repeatedly; a run announcement now and then,
	# committed before the kill so that it must survive it.
	for _ in 1 2 3; do kill -USR1 "$pid" 2>/dev/null || true; done
	if [ $((i % 10)) = 0 ]; then
		n=$(count 'select count(*) from runs')
		hold root 0
		ok=0
		wait_for 30 at_least 'select count(*) from runs' $((n + 1)) && ok=1
		release "$held_dir"
		if [ $ok = 0 ]; then
			echo "FAIL: round $i: the announced run was not recorded"; bad=1; break
		fi
	fi
	if [ $((i % 4)) = 0 ]; then
		"$ctl" --quiet --db "$db" scan --no-progress --no-packages /usr/bin/true /usr/bin/env >/dev/null 2>&1 &
		spid=$!
	else
		spid=
	fi
	# Not a wait for anything: the random moment of the kill, 0-150 ms
	# into the re-decisions.
	sleep "0.$(shuf -i 0-150 -n 1 | xargs printf '%03d')"
	kill -9 "$pid" 2>/dev/null || true
	[ -z "$spid" ] || kill -9 "$spid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ -z "$spid" ] || wait "$spid" 2>/dev/null || true
	pid=
	ic=$(sqlite3 "$db" 'pragma integrity_check' 2>&1)
	runs=$(count 'select count(*) from runs' 2>&1)
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

# 6. 'shstkctl status' reports the daemon from what root vouches for, not
# from a process's name (issue 14): any process can call itself shstkd.
# In a mount namespace with its own /run (a tmpfs: no systemd bus there,
# and the host's /run untouched): a process named shstkd run by nobody,
# named in a root-owned pid file, is not the daemon; a pid file nobody
# wrote is not believed; a root process named shstkd in root's pid file is.
need_root "the status checks run processes as nobody and mount a private /run"
cp /bin/sleep "$w/shstkd"
chmod 755 "$w" "$w/shstkd"
cat >"$w/status.sh" <<'STATUS'
set -u
w=$1 ctl=$2 db=$3
mount -t tmpfs shstkd-status /run && mkdir -p /run/shstk-policy || exit 2
pf=/run/shstk-policy/shstkd.pid
st() { "$ctl" --db "$db" status 2>&1 | sed -n 's/^daemon *//p'; }
comm_is() { i=0; while [ "$(cat /proc/$1/comm 2>/dev/null)" != shstkd ] && [ $i -lt 500 ]; do i=$((i + 1)); sleep 0.02; done; }
setpriv --reuid=nobody --regid=nogroup --clear-groups "$w/shstkd" 60 & p=$!
comm_is $p
echo $p >$pf
echo "nobody's process, root's pid file: $(st)"
kill $p
"$w/shstkd" 60 & p=$!
comm_is $p
echo $p >$pf
chown nobody $pf
echo "root's process, nobody's pid file: $(st)"
chown root $pf
echo "root's process, root's pid file: $(st) [pid $p]"
kill $p
STATUS
unshare -m sh "$w/status.sh" "$w" "$ctl" "$db" >"$w/status.out" 2>&1
sed 's/^/# /' "$w/status.out"
root_pid=$(sed -n 's/.*\[pid \([0-9]*\)\]$/\1/p' "$w/status.out")
if grep -q "^nobody's process, root's pid file: shstkd not running" "$w/status.out" &&
	grep -q "^root's process, nobody's pid file: shstkd not running" "$w/status.out" &&
	grep -q "^root's process, root's pid file: shstkd running, pid $root_pid (from the pid file" "$w/status.out"; then
	echo "ok: status believes root's pid file naming a root process, nothing else"
else
	echo "FAIL: status's daemon"; fail=1
fi
exit $fail
