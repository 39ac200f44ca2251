#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the real `shstkctl scan` over the fixture tree (tests/fixtures/tree)
# three times — fresh, unchanged, after removing a library and changing a
# script — and diffs each summary against test_scan.*.expected.  The
# duration line varies and elfinfo's exact wording of the malformed file is
# its own test's business, so both are normalised first.
set -eu
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
tree="$SHSTK_FIXTURES/tree/root"
here="$SHSTK_SRCDIR/tests/integration"
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
[ -d "$tree" ] || { echo "FAIL: fixture tree $tree missing"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$tree" "$work/root"
db="$work/state/shstk.db"
fail=0

norm() {
	sed -e 's/^duration: .*/duration: N/' -e 's|^\(  /[^:]*\): .*|\1: MESSAGE|'
}

check() {
	name=$1
	shift
	"$ctl" --db "$db" scan --no-packages --root "$work/root" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
		echo "FAIL: $name: shstkctl exited $?"; cat "$work/$name.err"; fail=1; return; }
	norm <"$work/$name.out" >"$work/$name.norm"
	if diff -u "$here/test_scan.$name.expected" "$work/$name.norm"; then
		echo "ok: $name"
	else
		echo "FAIL: $name: summary differs (above)"
		fail=1
	fi
}

check fresh /
check rescan /
rm "$work/root/usr/lib/x86_64-linux-gnu/libunmarked.so.1"
echo '# changed' >>"$work/root/usr/bin/script"
check changed /

# The database is 0640 and its directory was created.
mode=$(stat -c %a "$db")
[ "$mode" = 640 ] && echo "ok: database mode 640" || { echo "FAIL: database mode $mode"; fail=1; }

# Usage and failure exit codes.
set +e
"$ctl" --db "$db" scan --jobs x >/dev/null 2>"$work/e1"; rc=$?
[ $rc = 2 ] && echo "ok: bad --jobs exits 2" || { echo "FAIL: bad --jobs exited $rc"; fail=1; }
"$ctl" --db "$db" scan --root "$work/root" /no/such/dir >/dev/null 2>"$work/e2"; rc=$?
[ $rc = 1 ] && grep -q '^shstkctl: scan: .*/no/such/dir: No such file or directory$' "$work/e2" &&
	echo "ok: missing PATH exits 1 with one message" || { echo "FAIL: missing PATH: rc $rc"; cat "$work/e2"; fail=1; }
"$ctl" scan --help | grep -q '^Exit status:' && echo "ok: scan --help" || { echo "FAIL: scan --help"; fail=1; }
"$ctl" help scan | grep -q '^Usage: shstkctl scan' && echo "ok: help scan" || { echo "FAIL: help scan"; fail=1; }

# An executable that becomes a malformed ELF file or a shell script keeps
# no verdict of its old self (issue 21: report said "ineligible 0" above
# "self-unmarked 2").
sv="$work/stale"
cp -a "$tree" "$sv"
"$ctl" -q --db "$work/stale.db" scan --no-packages --root "$sv" / >/dev/null 2>&1 || { echo "FAIL: stale: scan"; fail=1; }
head -c 300 "$sv/usr/bin/self-unmarked" >"$work/cut" && cat "$work/cut" >"$sv/usr/bin/self-unmarked"
printf '#!/bin/sh\n# a script now, long enough to be a candidate like any other file\nexit 0\n' >"$sv/usr/bin/dep-unmarked"
"$ctl" -q --db "$work/stale.db" scan --no-packages --root "$sv" / >/dev/null 2>&1 || { echo "FAIL: stale: rescan"; fail=1; }
stale=$(sqlite3 "$work/stale.db" "SELECT count(*) FROM verdicts v JOIN objects o ON o.id = v.object
	WHERE o.path IN ('/usr/bin/self-unmarked', '/usr/bin/dep-unmarked')")
[ "$stale" = 0 ] && echo "ok: no verdict left for an executable that became malformed or a script" ||
	{ echo "FAIL: stale verdicts: $stale"; fail=1; }
"$ctl" --db "$work/stale.db" report >"$work/stale.report" 2>&1
python3 - "$work/stale.report" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
sec = t.split("Executables and their closure")[1].split("\n\n")[0]
inel = int(re.search(r"^  ineligible\s+(\d+)", sec, re.M).group(1))
parts = [int(n) for n in re.findall(r"^    \S+\s+(\d+)$", sec, re.M)]
print("# ineligible %d, verdicts %s" % (inel, parts))
sys.exit(0 if inel == sum(parts) and inel > 0 else 1)
PY
[ $? = 0 ] && echo "ok: report's ineligible count is the sum of its verdicts" ||
	{ echo "FAIL: report's verdict counts disagree"; fail=1; }

# A candidate the scanning user may not read: the error list says why, in
# the words the object row stores (it said "error", issue 21).  As nobody,
# so that the permission counts.
need_root "the unreadable-file case runs the scan as nobody"
ur="$work/unreadable"
chmod 711 "$work"
mkdir -p "$ur/tree" && chmod 777 "$ur"
cp /usr/bin/true "$ur/tree/noread" && chmod 111 "$ur/tree/noread"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$ctl" --db "$ur/u.db" scan --no-packages "$ur/tree" \
	>"$ur/out" 2>&1
grep -q "^  $ur/tree/noread: Permission denied\$" "$ur/out" &&
	echo "ok: an unreadable file is 'Permission denied' in scan's error list" ||
	{ echo "FAIL: unreadable file: $(grep -A2 '^errors:' "$ur/out")"; fail=1; }

# A closure 20 deep: explain indents two spaces a level up to ten, then
# says the depth, and every name stays in its column (issue 21: at depth
# 10 000 the indentation pushed names out of it; here from depth 18).
dp="$work/deep"
mkdir -p "$dp"
need_cmd cc gcc
i=20
while [ $i -ge 1 ]; do
	next=$((i + 1))
	if [ $i = 20 ]; then
		printf 'int f%d(void) { return %d; }\n' $i $i >"$dp/d$i.c"
		cc -shared -fPIC -o "$dp/libd$i.so" "$dp/d$i.c" || fail=1
	else
		printf 'int f%d(void); int f%d(void) { return f%d() + 1; }\n' $next $i $next >"$dp/d$i.c"
		cc -shared -fPIC -o "$dp/libd$i.so" "$dp/d$i.c" -L"$dp" -ld$next -Wl,-rpath,'$ORIGIN' || fail=1
	fi
	i=$((i - 1))
done
printf 'int f1(void); int main(void) { return f1() == 20 ? 0 : 1; }\n' >"$dp/main.c"
cc -o "$dp/deep" "$dp/main.c" -L"$dp" -ld1 -Wl,-rpath,'$ORIGIN' || fail=1
"$ctl" --db "$work/deep.db" explain --live "$dp/deep" >"$dp/out" 2>&1
python3 - "$dp/out" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
head = [l for l in lines if l.lstrip().startswith("#  object")][0]
col = head.index("marking")
rows = [l for l in lines if "libd" in l and "found via" not in l]
deep = [l for l in rows if "[20] libd20.so" in l]
bad = [l for l in rows if l[col:col + 4] != "none"]
print("# %d rows of libd*, marking column %d, out of column: %d" % (len(rows), col, len(bad)))
for l in bad[:3]:
    print("#   " + l)
sys.exit(0 if len(rows) == 20 and deep and not bad and "  libd10.so" in "\n".join(rows) else 1)
PY
[ $? = 0 ] && echo "ok: a 20-deep closure: indentation capped, depth shown, columns kept" ||
	{ echo "FAIL: deep closure"; sed 's/^/#   /' "$dp/out" | tail -16; fail=1; }

# A database in a read-only directory: readers say what they cannot do
# (issue 21: "Read-only file system", or "no database ... run scan" for a
# database that is there), in a private mount namespace.
rod="$work/rodir"
mkdir -p "$rod"
"$ctl" -q --db "$rod/r.db" scan --no-packages --root "$work/root" / >/dev/null 2>&1
msg=$(unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
	"$2" --db "$1/r.db" report 2>&1 >/dev/null' sh "$rod" "$ctl")
case $msg in
*"is read through an -shm file created beside it, and its directory is read-only"*)
	echo "ok: report in a read-only directory says why it cannot read" ;;
*) echo "FAIL: report in a read-only directory: $msg"; fail=1 ;;
esac

# A library symlink switched alternatives-style, every file unchanged: the
# rescan must notice and recompute the closures through it (issue 21: "0
# computed", and explain showed the old library where --live showed the
# new).  libunmarked.so.1 becomes a link, first to an unmarked build, then
# to a marked one.
ss="$work/switch"
cp -a "$tree" "$ss"
sl="$ss/usr/lib/x86_64-linux-gnu"
mv "$sl/libunmarked.so.1" "$sl/libunmarked.so.1.0"
cp "$sl/libmarked.so.1" "$sl/libunmarked.so.1.1"
ln -s libunmarked.so.1.0 "$sl/libunmarked.so.1"
"$ctl" -q --db "$work/switch.db" scan --no-packages --root "$ss" / >/dev/null 2>&1 || { echo "FAIL: switch: scan"; fail=1; }
ln -sfn libunmarked.so.1.1 "$sl/libunmarked.so.1"
"$ctl" --db "$work/switch.db" scan --no-packages --root "$ss" / >"$work/switch.out" 2>&1 || { echo "FAIL: switch: rescan"; fail=1; }
grep -q '^closures:        [1-9][0-9]* computed' "$work/switch.out" &&
	echo "ok: a switched library symlink makes the rescan compute closures" ||
	{ echo "FAIL: switched symlink: $(grep '^closures' "$work/switch.out")"; fail=1; }
via=$(sqlite3 "$work/switch.db" "SELECT c.resolved_path FROM closure c JOIN objects o ON o.id = c.object
	WHERE o.path = '/usr/bin/dep-unmarked' AND c.name = 'libunmarked.so.1'")
[ "$via" = /usr/lib/x86_64-linux-gnu/libunmarked.so.1.1 ] &&
	echo "ok: the closure resolves libunmarked.so.1 through the new link" ||
	{ echo "FAIL: switched symlink: the closure still names '$via'"; fail=1; }
"$ctl" --db "$work/switch.db" scan --no-packages --root "$ss" / >"$work/switch2.out" 2>&1
grep -q '^closures:        0 computed' "$work/switch2.out" &&
	echo "ok: an unchanged rescan after the switch computes no closure" ||
	{ echo "FAIL: unchanged rescan: $(grep '^closures' "$work/switch2.out")"; fail=1; }

# explain reads the database, explain --live computes: the same facts,
# risks, verdict and closure for every file (issue 21: an object without
# PT_GNU_STACK was 'execstack' in one and risk-free in the other, a shared
# library 'eligible' in one and without a verdict in the other).  Also for
# a copy of an executable whose PT_GNU_STACK is gone (made PT_NULL).
lw="$work/root/opt/live"
mkdir -p "$lw"
cp "$work/root/usr/bin/eligible" "$lw/no-gnu-stack"
python3 - "$lw/no-gnu-stack" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
phoff = struct.unpack_from("<Q", d, 0x20)[0]
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from("<I", d, o)[0] == 0x6474e551:  # PT_GNU_STACK
        struct.pack_into("<I", d, o, 0)                    # PT_NULL
open(sys.argv[1], "wb").write(d)
PY
"$ctl" -q --db "$work/live.db" scan --root "$work/root" /usr /opt >/dev/null 2>&1 ||
	{ echo "FAIL: scan for explain --live"; fail=1; }
same=0 differ=0
for f in "$lw"/* "$work"/root/usr/bin/* "$work"/root/usr/lib/x86_64-linux-gnu/*; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	head -c 4 "$f" | grep -q ELF || continue
	for fmt in table json; do
		p=${f#"$work/root"}
		"$ctl" --db "$work/live.db" explain --root "$work/root" --format=$fmt "$p" >"$work/db.$fmt" 2>&1
		"$ctl" --db "$work/live.db" explain --root "$work/root" --format=$fmt --live "$p" >"$work/live.$fmt" 2>&1
		if [ $fmt = table ]; then
			sed -e '/^  facts /d' -e '/^Decision/,$d' "$work/db.table" | sed -e '${/^$/d}' >"$work/a"
			sed -e '/^  facts /d' "$work/live.table" >"$work/b"
		else
			for s in db live; do
				# (an error message, for a file explain refuses, as it is)
				python3 -c 'import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:
    print(text)
    sys.exit(0)
for k in ("source", "identity", "decision", "history", "evidence", "runs", "violations"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True, indent=1))' "$work/$s.json" >"$work/$s.norm"
			done
			cp "$work/db.norm" "$work/a"
			cp "$work/live.norm" "$work/b"
		fi
		if cmp -s "$work/a" "$work/b"; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			echo "# explain and explain --live differ for $f ($fmt):"
			diff "$work/a" "$work/b" | sed 's/^/#   /' | head -20
		fi
	done
done
"$ctl" --db "$work/live.db" explain --root "$work/root" /opt/live/no-gnu-stack | grep -q '^  risks      execstack: no PT_GNU_STACK$' &&
	echo "ok: a missing PT_GNU_STACK is an execstack risk, said so" ||
	{ echo "FAIL: no-gnu-stack: execstack risk not shown"; fail=1; }
[ $differ = 0 ] && [ $same -gt 20 ] && echo "ok: explain and explain --live agree ($same outputs)" ||
	{ echo "FAIL: explain and explain --live: $differ differ, $same agree"; fail=1; }
exit $fail
