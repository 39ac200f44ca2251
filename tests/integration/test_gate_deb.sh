#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `shstkctl gate` on Debian packages.  The same compiled samples are packed
# as RPMs (rpmbuild) and as .debs (dpkg-deb --build), and the gate must give
# the same report and exit code for both, the package's identity aside:
# test_packager.sh pins the RPM reports in goldens, so a .deb judged
# differently shows here.  Then: every data.tar compression dpkg reads (xz,
# zstd, gzip and none from dpkg-deb; bzip2 and lzma packed here) gives that
# report again; hostile .debs (truncated, data.tar missing, an entry
# claiming 64 GiB, an entry named ../) are errors naming the file with exit
# 3, or judged without leaving the stage; and the debian/rules of
# packaging/dpkg/gate-example fails a build whose .deb fails the gate.
# Outputs are diffed against tests/integration/golden/deb-*.expected after
# normalising what varies; SHSTK_UPDATE_GOLDEN=1 rewrites them.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
. "$SHSTK_SRCDIR/tests/include/gate-samples.sh"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
golden="$SHSTK_SRCDIR/tests/integration/golden"
golden_prefix=deb-
policy="$SHSTK_SRCDIR/policies/examples/packager-gate.conf"
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
# Every prerequisite before the first check.
cc=${CC:-cc}
need_cmd "${cc%% *}" build-essential
need_cmd make build-essential
need_cmd ar binutils
need_cmd dpkg-deb dpkg
need_cmd rpmbuild rpm
need_cmd python3
need_cmd sqlite3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
export HOME="$work" # no user rpm macros, no user database
mkdir "$work/tmp"
export TMPDIR="$work/tmp" # the gate's staging directories, checked below

norm() {
	sed -e "s|$work|WORK|g" -e "s|$SHSTK_SRCDIR|SRCDIR|g" -e 's/[0-9a-f]\{40\}/BUILDID/g' \
	    -e 's|^make: \*\*\* \[debian/rules:[0-9]*:|make: *** [debian/rules:N:|'
}

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	fail=1
}

gate_samples "$work"
cd "$work"
for fmt in rpm deb; do
	"gate_$fmt" "$work" pkg-clean hello
	"gate_$fmt" "$work" pkg-ctx "hello ctxdemo"
	"gate_$fmt" "$work" pkg-jit jitapp "libwrap.so.1 libluajit-5.1.so.2"
done
gdb="$work/gate.db"

# ---- the same report as for the RPM ---------------------------------------------
# same_as_rpm NAME "PACKAGES" GATE-ARGS...: `gate GATE-ARGS` on the .rpm and
# on the .deb of each package; the outputs, with each package's file name
# and identity (NEVRA, name_version_arch) made alike, and the exit codes
# must be equal.  The .deb's raw output is left in NAME.deb.out.
same_as_rpm() {
	_name=$1 _pkgs=$2
	shift 2
	_alike=
	for _p in $_pkgs; do
		_alike="$_alike -e s/$_p\\.\\(rpm\\|deb\\)/$_p.PKG/g -e s/$_p-1\\.0-1\\.[a-z0-9_]*/$_p-ID/g -e s/${_p}_1\\.0-1_amd64/$_p-ID/g"
	done
	for _fmt in rpm deb; do
		_rc=0
		# shellcheck disable=SC2046
		"$ctl" gate "$@" $(for _p in $_pkgs; do echo "$_p.$_fmt"; done) >"$_name.$_fmt.out" 2>&1 || _rc=$?
		echo "exit $_rc" >>"$_name.$_fmt.out"
		# shellcheck disable=SC2086
		sed $_alike "$_name.$_fmt.out" >"$_name.$_fmt.alike"
	done
	if ! grep -q '/usr/bin/' "$_name.rpm.alike"; then
		cat "$_name.rpm.out"
		not_ok "$_name: the RPM's report judged no binary"
	elif diff -u "$_name.rpm.alike" "$_name.deb.alike"; then
		ok "$_name: .deb report = RPM report ($(tail -n 1 "$_name.deb.alike"))"
	else
		not_ok "$_name: the .deb's report differs from the RPM's (above)"
	fi
}
same_as_rpm clean pkg-clean --db "$gdb"
same_as_rpm ctx-default "pkg-clean pkg-ctx" --db "$gdb"
same_as_rpm ctx-policy pkg-ctx --db "$gdb" --policy "$policy"
same_as_rpm ctx-policy-json pkg-ctx --db "$gdb" --policy "$policy" --format json
same_as_rpm strict pkg-clean --db "$gdb" --strict
same_as_rpm jit-closure pkg-jit --db "$gdb"
same_as_rpm jit-closure-json pkg-jit --db "$gdb" --format json
# The .deb's own report, pinned as well: a gate that judged both formats
# wrongly alike would pass the comparisons.
golden_check ctx-policy "$ctl" gate --db "$gdb" --policy "$policy" pkg-ctx.deb
golden_check jit-closure-json "$ctl" gate --db "$gdb" --format json pkg-jit.deb
# One run over both formats.
golden_check mixed "$ctl" gate --db "$gdb" --policy "$policy" pkg-clean.rpm pkg-ctx.deb

# Evidence: a violation of ctxdemo's build, as the build farm recorded it,
# fails the .deb that ships that build as it fails the RPM.
"$ctl" gate --db "$gdb" --format json pkg-ctx.deb >gate.json || true
bid=$(sqlite3 :memory: "SELECT json_extract(value, '\$.build_id') FROM json_each(json_extract(readfile('gate.json'), '\$.packages[0].binaries')) WHERE json_extract(value, '\$.path') = '/usr/bin/ctxdemo'")
[ -n "$bid" ] || { echo "FAIL: no build-id for ctxdemo in the .deb's report"; exit 1; }
gate_violation_bundle "$bid" violation.json
"$ctl" import --db "$gdb" violation.json >/dev/null
same_as_rpm evidence "pkg-clean pkg-ctx" --db "$gdb"
golden_check evidence "$ctl" gate --db "$gdb" pkg-clean.deb pkg-ctx.deb

# ---- every compression ----------------------------------------------------------------
# dpkg-deb -Z (Debian 12's: xz, zstd, gzip, none), the member's name showing
# the compression really used; and bzip2 and lzma, which dpkg reads but no
# longer writes, packed here from the same tree.  Each .deb must get
# data.tar.xz's report.
mkdir members
(cd members && ar x ../pkg-ctx.deb)
"$ctl" gate --db "$gdb" --policy "$policy" pkg-ctx.deb >xz.out 2>&1 || true
for z in zstd gzip none; do
	gate_deb "$work" pkg-ctx "hello ctxdemo" "" "$z" "$work/pkg-ctx-$z.deb"
done
python3 - "$work/deb-root-pkg-ctx" <<'PY'
import bz2, io, lzma, sys, tarfile
out = io.BytesIO()
with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
    t.add(sys.argv[1] + "/usr", arcname="./usr")
open("members/data.tar.bz2", "wb").write(bz2.compress(out.getvalue()))
open("members/data.tar.lzma", "wb").write(lzma.compress(out.getvalue(), format=lzma.FORMAT_ALONE))
PY
(cd members && ar rcD ../pkg-ctx-bzip2.deb debian-binary control.tar.xz data.tar.bz2 &&
	ar rcD ../pkg-ctx-lzma.deb debian-binary control.tar.xz data.tar.lzma)
for z in zstd gzip none bzip2 lzma; do
	member=$(ar t "pkg-ctx-$z.deb" | grep '^data\.tar' || true)
	case $z in
	zstd) want=data.tar.zst ;; gzip) want=data.tar.gz ;; none) want=data.tar ;;
	bzip2) want=data.tar.bz2 ;; lzma) want=data.tar.lzma ;;
	esac
	rc=0
	"$ctl" gate --db "$gdb" --policy "$policy" "pkg-ctx-$z.deb" >"$z.out" 2>&1 || rc=$?
	if [ "${member%/}" != "$want" ]; then
		not_ok "compression $z: the package's member is '$member', not $want"
	elif [ "$rc" = 1 ] && sed "s/pkg-ctx-$z\\.deb/pkg-ctx.deb/" "$z.out" | diff -u xz.out -; then
		ok "$want: the same report as data.tar.xz, exit 1"
	else
		not_ok "$want: exit $rc, or a report other than data.tar.xz's (above)"
	fi
done

# ---- hostile packages -------------------------------------------------------------
# Each is an error naming the file, exit 3, nothing judged for it.
size=$(stat -c %s pkg-ctx.deb)
head -c $((size - 2000)) pkg-ctx.deb >trunc-end.deb
golden_check trunc-end "$ctl" gate --db "$gdb" pkg-clean.deb trunc-end.deb
head -c 100 pkg-ctx.deb >trunc-head.deb
golden_check trunc-head "$ctl" gate --db "$gdb" trunc-head.deb
# Cut inside ctxdemo's bytes (an uncompressed data.tar, so the offset is
# known): the RPM reader's words for its truncated payload.
cut=$(python3 - pkg-ctx-none.deb <<'PY'
import sys, tarfile
d = open(sys.argv[1], "rb").read()
pos = 8
while pos < len(d):
    name, size = d[pos:pos + 16].decode().strip().rstrip("/"), int(d[pos + 48:pos + 58])
    if name == "data.tar":
        member = tarfile.open(fileobj=__import__("io").BytesIO(d[pos + 60:pos + 60 + size]))
        print(pos + 60 + member.getmember("./usr/bin/ctxdemo").offset_data + 1000)
        break
    pos += 60 + size + size % 2
PY
)
head -c "$cut" pkg-ctx-none.deb >trunc-content.deb
golden_check trunc-content "$ctl" gate --db "$gdb" trunc-content.deb
(cd members && ar rcD ../no-data.deb debian-binary control.tar.xz &&
	ar rcD ../no-control.deb debian-binary data.tar.xz)
golden_check no-data "$ctl" gate --db "$gdb" no-data.deb
golden_check no-control "$ctl" gate --db "$gdb" no-control.deb
printf 'not a deb\n' >junk.deb
golden_check junk "$ctl" gate --db "$gdb" junk.deb
# data.tar.xz with an entry whose header claims 64 GiB and ends at once; and
# one whose name climbs out of the package ("../escape") holding a marked
# binary: judged, never written outside the staging directory.
python3 - hello <<'PY'
import io, lzma, sys, tarfile
big = tarfile.TarInfo("./usr/bin/big")
big.size, big.mode = 64 << 30, 0o755
open("big.tar.xz", "wb").write(lzma.compress(big.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)))
elf = open(sys.argv[1], "rb").read()
out = io.BytesIO()
with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
    e = tarfile.TarInfo("../escape")
    e.size, e.mode = len(elf), 0o755
    t.addfile(e, io.BytesIO(elf))
open("escape.tar.xz", "wb").write(lzma.compress(out.getvalue()))
PY
(cd members && cp ../big.tar.xz data.tar.xz && ar rcD ../big.deb debian-binary control.tar.xz data.tar.xz &&
	cp ../escape.tar.xz data.tar.xz && ar rcD ../escape.deb debian-binary control.tar.xz data.tar.xz)
golden_check big-entry "$ctl" gate --db "$gdb" big.deb
golden_check escape "$ctl" gate --db "$gdb" escape.deb
if [ -e "$TMPDIR/escape" ] || [ -e "$work/escape" ]; then
	not_ok "a payload entry named ../escape was written outside the staging directory"
fi
if [ -n "$(ls -A "$TMPDIR")" ]; then
	ls -la "$TMPDIR"
	not_ok "the gate left its staging directories behind"
else
	ok "no staging directory left behind"
fi

# ---- packaging/dpkg/gate-example: debian/rules ------------------------------------
# Its override_dh_builddeb after dh_builddeb (a stub here: the .debs are
# ours): the .debs debian/files lists in .. are gated, and a failing one
# fails the build.
example="$SHSTK_SRCDIR/packaging/dpkg/gate-example"
mkdir -p bin build/src/debian
printf '#!/bin/sh\necho "dh_builddeb (stub)"\n' >bin/dh_builddeb
chmod +x bin/dh_builddeb
ln -s "$ctl" bin/shstkctl
cp "$example/debian/rules" build/src/debian/rules
cp pkg-clean.deb build/pkg-clean_1.0-1_amd64.deb
cp pkg-ctx.deb build/pkg-ctx_1.0-1_amd64.deb
rules() { (cd build/src && PATH="$work/bin:$PATH" make -s -f debian/rules SHSTK_GATE_ARGS="--db $work/empty.db" "$@"); }
printf 'pkg-clean_1.0-1_amd64.deb misc optional\npkg-clean-dbgsym_1.0-1_amd64.ddeb debug optional\n' \
	>build/src/debian/files
golden_check rules-pass rules override_dh_builddeb
cp "$policy" build/src/debian/shstk-gate.conf
printf 'pkg-ctx_1.0-1_amd64.deb misc optional\n' >>build/src/debian/files
golden_check rules-fail rules override_dh_builddeb
exit $fail
