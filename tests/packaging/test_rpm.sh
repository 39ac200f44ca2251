#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the shstk-policy RPM from packaging/shstk-policy.spec with rpmbuild
# (Debian's rpm works: --nodeps, no build-id links, no debuginfo), from a
# tarball of this tree laid out as `meson dist` lays it out; checks the file
# list and the scriptlets (the preload is never activated by %post, the
# file triggers rescan), installs it into a scratch root with `rpm --root`
# and runs the installed shstkctl.
set -eu
src=${SHSTK_SRCDIR:?}
. "$src/tests/include/lib.sh"
need_cmd rpmbuild rpm
need_cmd rpm
need_cmd git
need_cmd meson
need_cmd xz xz-utils
need_cmd file
need_root "rpm --root chroots into the scratch root: run the tests as root"
# The package is made from `git archive HEAD` (below).  CI runs in a clone;
# a build from an unpacked release tarball has no HEAD to package (or, if
# unpacked inside some other repository, the wrong one).
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || top=
[ "$top" = "$(cd "$src" && pwd -P)" ] && git -C "$src" rev-parse --verify -q HEAD >/dev/null ||
	missing "a git checkout at $src" "this test packages 'git archive HEAD': run it from a git clone, not from an unpacked tarball"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work" # no user rpm macros
version=$(sed -n "s/^  version : '\([^']*\)',$/\1/p" "$src/meson.build")
[ -n "$version" ] || { echo "FAIL: no version in meson.build"; exit 1; }
name=shstk-policy-$version
fail=0
check() { # check NAME COMMAND...: one line of TAP-ish output
	n=$1
	shift
	if "$@"; then echo "ok - $n"; else echo "not ok - $n"; fail=1; fi
}

# What `meson dist` puts in its tarball is `git archive` of HEAD (it refuses
# a dirty tree, and would build and test everything a second time): the
# same archive here, so the test packages the committed tree; uncommitted
# edits are not in the package, as they would not be in a release.
mkdir -p "$work/SOURCES"
git -C "$src" archive --format=tar --prefix="$name/" HEAD | xz -T1 -0 >"$work/SOURCES/$name.tar.xz"

start=$(date +%s)
if ! rpmbuild -bb --nodeps \
	--define "_topdir $work" \
	--define "shstk_version $version" \
	--define '_build_id_links none' \
	--define 'debug_package %{nil}' \
	--define '_smp_mflags -j2' \
	"$src/packaging/shstk-policy.spec" >"$work/rpmbuild.log" 2>&1; then
	tail -n 40 "$work/rpmbuild.log"
	echo "FAIL: rpmbuild"
	exit 1
fi
echo "# rpmbuild took $(($(date +%s) - start)) s"
rpmfile=$(ls "$work"/RPMS/x86_64/shstk-policy-"$version"-1*.x86_64.rpm)
stubsfile=$(ls "$work"/RPMS/x86_64/shstk-policy-abi-stubs-"$version"-1*.x86_64.rpm)

# ---- file list ------------------------------------------------------------------
rpm -qlp "$rpmfile" >"$work/files"
sed 's/^/#   /' "$work/files"
for f in /usr/bin/shstkctl /usr/sbin/shstkd /usr/libexec/shstk-coredump /usr/lib64/libshstk_preload.so \
	/etc/shstk-policy/policy.conf /usr/lib/systemd/system/shstkd.service \
	/usr/lib/systemd/system/shstkd-rescan.service /usr/lib/systemd/system/shstkd-rescan.timer \
	/usr/lib/sysusers.d/shstk-policy.conf /usr/lib/tmpfiles.d/shstk-policy.conf /var/lib/shstk-policy; do
	check "file $f" grep -qx "$f" "$work/files"
done
# The i686 and x32 stubs are a package of their own: the x86_64 package
# carries no 32-bit object, and recommends them.
check "no 32-bit stub in the main package" sh -c "! grep -q '^/usr/lib/libshstk_preload.so\|^/usr/libx32/' '$work/files'"
check "the stubs package holds both stubs" sh -c "[ \"\$(rpm -qlp '$stubsfile' | sort | tr '\\n' ' ')\" = '/usr/lib/libshstk_preload.so /usr/libx32/libshstk_preload.so ' ]"
check "the main package recommends the stubs" sh -c "rpm -qp --recommends '$rpmfile' | grep -qx 'shstk-policy-abi-stubs = $version-1.*'"
check "the main package requires the stubs where a 32-bit loader is" sh -c "rpm -qp --requires '$rpmfile' | grep -qx '(shstk-policy-abi-stubs = $version-1.* if (ld-linux.so.2 or glibc(x32)))'"
check "erasing the stubs warns while the preload line is there" sh -c "rpm -qp --scripts '$stubsfile' | grep -q 'still names libshstk_preload.so'"
# --configfiles lists a plain %config too: the flags say noreplace (n).
check "policy.conf is %config(noreplace)" sh -c "rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\\n]' '$rpmfile' | grep -qx 'cn /etc/shstk-policy/policy.conf'"
check "no test programs packaged" sh -c "! grep -q '/tp-\\|test_' '$work/files'"

# ---- scriptlets -----------------------------------------------------------------
rpm -qp --scripts "$rpmfile" >"$work/scripts"
rpm -qp --filetriggers "$rpmfile" >"$work/triggers"
sed -n '/^postinstall scriptlet/,/^[a-z]* scriptlet/p' "$work/scripts" | sed '$d' >"$work/post"
check "%post exists" grep -q systemd-tmpfiles "$work/post"
check "%post does not activate the preload" sh -c "! grep -q 'ld.so.preload\\|LD_PRELOAD\\|preload enable' '$work/post'"
check "%preun takes the preload out of ld.so.preload on erase" grep -q "sed -i '/libshstk_preload" "$work/scripts"
check "file trigger on install rescans" sh -c "grep -A3 'transfiletriggerin' '$work/triggers' | grep -q 'shstkd-rescan.service'"
check "file trigger on removal rescans" sh -c "grep -A3 'transfiletriggerpostun' '$work/triggers' | grep -q 'shstkd-rescan.service'"

# ---- install into a scratch root ------------------------------------------------------
root="$work/root"
mkdir -p "$root"
rpm --root "$root" --initdb
# The scratch root has no shell for the scriptlets (they were read above).
if ! rpm --root "$root" --nodeps --force-debian --noscripts --notriggers -i "$rpmfile" "$stubsfile" >"$work/install.log" 2>&1; then
	cat "$work/install.log"
	echo "FAIL: rpm --root -i"
	exit 1
fi
check "installed package is in the scratch rpmdb" sh -c "rpm --root '$root' -q shstk-policy | grep -q '^shstk-policy-$version'"
check "installed shstkctl --help runs" sh -c "'$root/usr/bin/shstkctl' --help | grep -q '^  verify '"
check "installed shstkctl --version" sh -c "'$root/usr/bin/shstkctl' --version | grep -qx 'shstkctl $version'"
check "installed policy parses" "$root/usr/bin/shstkctl" policy check "$root/etc/shstk-policy/policy.conf"
check "installed preload is an x86-64 shared object" sh -c "file -L '$root/usr/lib64/libshstk_preload.so' | grep -q 'ELF 64-bit LSB shared object, x86-64'"
# /etc/ld.so.preload names PREFIX/$LIB/libshstk_preload.so: ld.so of i686 ($LIB = lib)
# and x32 ($LIB = libx32) processes must find a library of their own class.
check "installed i386 preload stub" sh -c "file -L '$root/usr/lib/libshstk_preload.so' | grep -q 'ELF 32-bit LSB shared object, Intel 80386'"
check "installed x32 preload stub" sh -c "file -L '$root/usr/libx32/libshstk_preload.so' | grep -q 'ELF 32-bit LSB shared object, x86-64'"
check "installed shstkctl writes \$LIB" sh -c "'$root/usr/bin/shstkctl' preload --help | grep -qF '/usr/\$LIB/libshstk_preload.so'"
exit $fail
