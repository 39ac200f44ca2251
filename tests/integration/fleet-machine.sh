#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One simulated machine of tests/integration/test_fleet.sh, run by it under
# `unshare --mount --uts`: a private /run and /var/log/journal (tmpfs),
# /etc/machine-id and journald.conf (bind mounts), its own host name, its
# own systemd-journald and the one of the namespace shstk-fleet (started
# here: each opens its sockets itself when not socket-activated), the real
# shstkd sharing its evidence ([fleet] share = yes) into that namespace and
# logging into the machine's journal as it does under systemd, a run and a
# violation, then systemd-journal-upload of the namespace's journal only to
# the collector.  Everything it starts is stopped by its trap; nothing
# outside the namespace is written except under DIR.
# Usage: fleet-machine.sh DIR HOSTNAME MACHINE_ID URL VICTIM [UPLOAD-ARG...]
# FLEET_UPLOAD_NET: a network namespace file (nsenter --net) the upload
# runs in, so that the collector sees it come from this machine's own
# address; journald and shstkd stay in the initial network namespace (the
# proc connector and audit netlink exist only there).
# DIR holds policy.conf, shstk.db (scanned), preload-allowlist; the
# namespace's journal (what is uploaded) is exported to DIR/journal.export
# for the test to read.  The UPLOAD-ARGs are appended to the
# systemd-journal-upload command line (--key, --cert, --trust for HTTPS).
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
dir=$1 host=$2 mid=$3 url=$4 victim=$5
shift 5
d="$SHSTK_BUILDDIR/auditd/shstkd"
pl="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
feed="$SHSTK_BUILDDIR/tests/tools/audit-feed.so"
jpid=
npid=
spid=
cleanup() {
	[ -z "$spid" ] || { kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; } || true
	[ -z "$npid" ] || { kill -TERM "$npid" 2>/dev/null && wait "$npid" 2>/dev/null; } || true
	[ -z "$jpid" ] || { kill -TERM "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null; } || true
}
trap cleanup EXIT
exit_on_signals

mount -t tmpfs -o size=64m "fleet-$host" /run
echo "$mid" >"$dir/machine-id"
mount --bind "$dir/machine-id" /etc/machine-id
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\nForwardToKMsg=no\n' \
	>"$dir/journald.conf"
mount --bind "$dir/journald.conf" /etc/systemd/journald.conf
# The namespace's instance reads journald@shstk-fleet.conf and its drop-ins
# (in /run too, private here), not journald.conf; a namespace instance
# writes to /var/log/journal/MID.shstk-fleet at once otherwise, so that is
# a private tmpfs as well in case the drop-in were not read.
mkdir -p /run/systemd/journald@shstk-fleet.conf.d
printf '[Journal]\nStorage=volatile\n' >/run/systemd/journald@shstk-fleet.conf.d/fleet-test.conf
[ ! -d /var/log/journal ] || mount -t tmpfs -o size=16m "fleet-$host-journal" /var/log/journal
# journalctl --catalog needs the catalog in the (private) database.
mkdir -p "$dir/catalog-src" "$dir/catalog-db"
cp "$SHSTK_SRCDIR/auditd/shstk-policy.catalog" "$dir/catalog-src/"
mount --bind "$dir/catalog-src" /usr/lib/systemd/catalog
mount --bind "$dir/catalog-db" /var/lib/systemd/catalog
journalctl --update-catalog
hostname "$host"
# The machine's key (engine/fleet.h), made in its namespace: the line for
# the collector's machine_keys names this machine's id.
"$SHSTK_BUILDDIR/cli/shstkctl" fleet key --new --key "$dir/fleet.key" --policy "$dir/policy.conf" >"$dir/key.line" ||
	{ echo "FAIL: $host: shstkctl fleet key --new"; exit 1; }

/lib/systemd/systemd-journald &
jpid=$!
wait_for 30 test -S /run/systemd/journal/socket || { echo "FAIL: $host: journald did not open its socket"; exit 1; }
jdir=/run/log/journal/$mid
# systemd-journald@shstk-fleet.service runs this (ExecStart=systemd-journald %i).
/lib/systemd/systemd-journald shstk-fleet >"$dir/journald-fleet.log" 2>&1 &
npid=$!
wait_for 30 test -S /run/systemd/journal.shstk-fleet/socket ||
	{ echo "FAIL: $host: journald of the namespace shstk-fleet did not open its socket"; exit 1; }
fdir=/run/log/journal/$mid.shstk-fleet

# shstkd as in test_shstkd_namer.sh: audit-feed.so stands in for the
# kernel's audit socket (no host kernel makes a control-protection record).
# JOURNAL_STREAM: as under systemd, shstkd logs into the machine's journal
# (its violation line with SHSTK_EXE, SHSTK_COMM, SHSTK_PID), which must
# not be what is uploaded.  The fleet entries go to the default
# --fleet-socket, the namespace's.
env JOURNAL_STREAM=0:0 LD_PRELOAD="$feed" SHSTK_TEST_AUDIT_FEED="$dir/audit.sock" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$d" -c "$dir/policy.conf" --db "$dir/shstk.db" --allowlist "$dir/allowlist" --events-socket "$dir/events" \
	--no-kmsg --no-symbols >"$dir/shstkd.log" 2>&1 &
spid=$!
slog() { cat "$dir/shstkd.log"; journalctl -D "$jdir" -o cat _COMM=shstkd 2>/dev/null; }
watching() { slog | grep -q watching; }
wait_for 30 watching || { echo "FAIL: $host: shstkd not watching"; slog; exit 1; }
wait_for 10 test -S "$dir/audit.sock" || { echo "FAIL: $host: no fed audit socket"; exit 1; }
count() { sqlite3 "$dir/shstk.db" "$1"; }
at_least() { [ "$(count "$1")" -ge "$2" ]; }
entries() { journalctl -D "$fdir" -o cat "MESSAGE_ID=$1" 2>/dev/null | wc -l; }
has_entries() { [ "$(entries "$1")" -ge "$2" ]; }

# A run: a shell announces itself through the real preload and ends.
held "$dir/held" root 0 "$dir/events" "$dir/preload-allowlist" "$pl"
wait_for 30 at_least "select count(*) from runs where pid = $hpid" 1 ||
	{ echo "FAIL: $host: the held shell's run was not recorded"; slog; exit 1; }
release "$dir/held"
wait_for 30 at_least "select count(*) from runs where pid = $hpid and ended_us is not null" 1 ||
	{ echo "FAIL: $host: the run's end was not recorded"; exit 1; }

# A violation of VICTIM, as the kernel's audit record says it (confirmed).
python3 - "$dir/audit.sock" "$victim" <<'EOF'
import socket, struct, sys, time
path, exe = sys.argv[1:]
t = time.time()
text = ('audit(%d.%03d:91): auid=0 uid=0 gid=0 ses=1 pid=4343 comm="victim" exe="%s" tid=4343 '
        'ip=0x7f0000001234 sp=0x7ffc00000000 ssp=0x7f0000fff000 error=0x1 kind="near ret" '
        'ip_file="%s" ip_off=0x1234 shstk_mode=audit shstk_action=resync count=1'
        % (int(t), int(t * 1000) % 1000, exe, exe)).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(struct.pack("=IHHII", 16 + len(text), 1704, 0, 91, 0) + text, path)
EOF
wait_for 30 at_least "select count(*) from violations where pid = 4343" 1 ||
	{ echo "FAIL: $host: the fed violation was not recorded"; slog; exit 1; }

# The three kinds of entry, in the namespace's journal.
for k in run:4b3b4a93b1e54aa9b19e4c55efedf345 violation:7571215c8ddc42c68c60e9edc8d42e9e \
	decision:1c07f0c5e5204ffba4cb0c51b7224541; do
	wait_for 30 has_entries "${k#*:}" 1 || {
		echo "FAIL: $host: no ${k%%:*} entry in the namespace's journal; it has:"
		journalctl -D "$fdir" -o export | grep -E '^(MESSAGE=|MESSAGE_ID=)'
		echo "and the machine's journal has:"
		journalctl -D "$jdir" -o export | grep -E '^(MESSAGE=|MESSAGE_ID=)'
		slog
		exit 1
	}
done
journalctl -D "$fdir" -o export >"$dir/journal.export"
# As shstkd(8) says to read them: the namespace by name, with the catalog.
journalctl --namespace=shstk-fleet -x --no-pager MESSAGE_ID=7571215c8ddc42c68c60e9edc8d42e9e >"$dir/catalog.txt" 2>&1 || true

# What is uploaded is the namespace's journal alone: shstkd's own log line of
# the violation (SHSTKD_MID_VIOLATION, with the victim's comm and pid) is in
# the machine's journal and not there, nor any other of the machine's lines.
logline() { journalctl -D "$jdir" -o export MESSAGE_ID=6b0e3d51c6a94f0f9e2b7a4c1d8f3e27 2>/dev/null | grep -q '^SHSTK_COMM=victim$'; }
wait_for 30 logline || { echo "FAIL: $host: shstkd's violation log line is not in the machine's journal"; slog; exit 1; }
if grep -q -e '^SHSTK_COMM=' -e '^SHSTK_PID=' -e '^MESSAGE_ID=6b0e3d51c6a94f0f9e2b7a4c1d8f3e27$' \
	"$dir/journal.export"; then
	echo "FAIL: $host: the namespace's journal (what is uploaded) holds shstkd's log:"
	grep -e '^SHSTK_COMM=' -e '^SHSTK_PID=' -e '^MESSAGE=' "$dir/journal.export"
	exit 1
fi
if [ "$(grep -c '^__CURSOR=' "$dir/journal.export")" != "$(grep -c '^_NAMESPACE=shstk-fleet$' "$dir/journal.export")" ]; then
	echo "FAIL: $host: an entry of the namespace's journal lacks _NAMESPACE=shstk-fleet"
	exit 1
fi

# Ship it: systemd-journal-upload reads the namespace's journal directory
# (v252 has no --namespace).  "$@": the caller's extra arguments.
${FLEET_UPLOAD_NET:+nsenter --net="$FLEET_UPLOAD_NET"} /lib/systemd/systemd-journal-upload --url="$url" -D "$fdir" --follow=no --save-state="$dir/upload.state" "$@" \
	>"$dir/upload.log" 2>&1 || { echo "FAIL: $host: systemd-journal-upload failed"; cat "$dir/upload.log"; exit 1; }
echo "machine $host: $(entries 4b3b4a93b1e54aa9b19e4c55efedf345) run, $(entries 7571215c8ddc42c68c60e9edc8d42e9e) violation, $(entries 1c07f0c5e5204ffba4cb0c51b7224541) decision entries uploaded"
