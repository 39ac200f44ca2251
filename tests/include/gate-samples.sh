# SPDX-License-Identifier: GPL-2.0-or-later
# The packages `shstkctl gate` is tested on, built alike as RPMs and .debs so
# that the two readers can be held to one report; source it after lib.sh:
#   . "$SHSTK_SRCDIR/tests/include/gate-samples.sh"
# (POSIX sh).  The callers check their prerequisites (cc, rpmbuild,
# dpkg-deb) before the first check they make.

# gate_samples DIR: compiles into DIR the programs the packages ship:
#   hello       marked SHSTK, nothing against it;
#   ctxdemo     marked with -z shstk although it calls swapcontext, on a C
#               library that does not switch shadow stacks (risk 'context');
#   jitapp      marked, needs libwrap.so.1, which needs libluajit-5.1.so.2 (a
#               stub with LuaJIT's soname): only the resolved closure, not
#               the program's DT_NEEDED, names the JIT runtime.
gate_samples() {
	_gs_cc=${CC:-cc}
	cat >"$1/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
C
	cat >"$1/ctxdemo.c" <<'C'
#include <stdio.h>
#include <ucontext.h>
static ucontext_t a, b;
static char stack[16384];
static void f(void) { puts("in ctx"); swapcontext(&b, &a); }
int main(void)
{
	getcontext(&b);
	b.uc_stack.ss_sp = stack;
	b.uc_stack.ss_size = sizeof(stack);
	makecontext(&b, f, 0);
	swapcontext(&a, &b);
	return 0;
}
C
	cat >"$1/jitstub.c" <<'C'
int luaJIT_stub(void) { return 42; }
C
	cat >"$1/wrap.c" <<'C'
int luaJIT_stub(void);
int wrap(void) { return luaJIT_stub(); }
C
	cat >"$1/jitapp.c" <<'C'
int wrap(void);
int main(void) { return wrap() == 42 ? 0 : 1; }
C
	for _gs_p in hello ctxdemo; do
		$_gs_cc -O2 -fcf-protection=full -Wl,-z,shstk -Wl,--build-id -o "$1/$_gs_p" "$1/$_gs_p.c"
	done
	$_gs_cc -shared -fPIC -Wl,-soname,libluajit-5.1.so.2 -o "$1/libluajit-5.1.so.2" "$1/jitstub.c"
	$_gs_cc -shared -fPIC -Wl,-soname,libwrap.so.1 -o "$1/libwrap.so.1" "$1/wrap.c" "$1/libluajit-5.1.so.2"
	$_gs_cc -O2 -fcf-protection=full -Wl,-z,shstk -Wl,--build-id -Wl,-rpath-link,"$1" -o "$1/jitapp" \
		"$1/jitapp.c" "$1/libwrap.so.1"
	LD_LIBRARY_PATH="$1" "$1/jitapp" || { echo "FAIL: the jitapp fixture does not run"; exit 1; }
}

# gate_rpm DIR NAME "BINS" ["LIBS"]: DIR/NAME.rpm, NAME 1.0-1, shipping DIR's
# files BINS in /usr/bin and LIBS in /usr/lib64, unstripped (the build-ids
# stay those of DIR's files).
gate_rpm() {
	cat >"$1/gate-sample.spec" <<'SPEC'
Name: %{pkgname}
Version: 1.0
Release: 1
Summary: shstkctl gate test package
License: GPL-2.0-or-later
%description
A package built by the shstk-policy test suite.
%install
mkdir -p %{buildroot}/usr/bin
for f in %{bins}; do install -m 755 %{srcdir}/$f %{buildroot}/usr/bin/$f; done
%{?libs:mkdir -p %{buildroot}/usr/lib64; for f in %{libs}; do install -m 755 %{srcdir}/$f %{buildroot}/usr/lib64/$f; done}
%files
/usr/bin/*
%{?libs:/usr/lib64/*}
SPEC
	rpmbuild -bb --nodeps --define "_topdir $1/top" --define "pkgname $2" --define "bins $3" \
		${4:+--define "libs $4"} --define "srcdir $1" --define '_build_id_links none' \
		--define '__strip /bin/true' --define 'debug_package %{nil}' "$1/gate-sample.spec" \
		>"$1/rpmbuild-$2.log" 2>&1 || { cat "$1/rpmbuild-$2.log"; echo "FAIL: rpmbuild $2"; exit 1; }
	cp "$1"/top/RPMS/*/"$2"-1.0-1.*.rpm "$1/$2.rpm"
}

# gate_deb DIR NAME "BINS" ["LIBS" [COMPRESSION [OUT]]]: the same tree as
# gate_rpm's as a .deb (NAME 1.0-1 amd64), its data.tar compressed with
# COMPRESSION (dpkg-deb -Z: xz, the default, zstd, gzip or none), into OUT
# (default DIR/NAME.deb).
gate_deb() {
	_gd_root="$1/deb-root-$2"
	rm -rf "$_gd_root"
	mkdir -p "$_gd_root/DEBIAN" "$_gd_root/usr/bin"
	for _gd_f in $3; do install -m 755 "$1/$_gd_f" "$_gd_root/usr/bin/$_gd_f"; done
	if [ -n "${4:-}" ]; then
		mkdir -p "$_gd_root/usr/lib64"
		for _gd_f in $4; do install -m 755 "$1/$_gd_f" "$_gd_root/usr/lib64/$_gd_f"; done
	fi
	printf 'Package: %s\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: shstk-policy tests <tests@invalid>\nDescription: shstkctl gate test package\n A package built by the shstk-policy test suite.\n' \
		"$2" >"$_gd_root/DEBIAN/control"
	dpkg-deb --root-owner-group -Z"${5:-xz}" --build "$_gd_root" "${6:-$1/$2.deb}" >"$1/dpkg-deb-$2.log" 2>&1 ||
		{ cat "$1/dpkg-deb-$2.log"; echo "FAIL: dpkg-deb $2"; exit 1; }
}

# gate_violation_bundle BUILD-ID FILE: an evidence bundle with one
# shadow-stack violation of /usr/bin/ctxdemo of that build, and the
# quarantine that followed, as a verify run on a CET machine records them.
gate_violation_bundle() {
	cat >"$2" <<JSON
{"format":"shstk-policy-evidence","version":1,"provenance":{"host":"buildfarm"},
 "runs":[{"identity":"build-id:$1","build_id":"$1","exe_path":"/usr/bin/ctxdemo","pid":4242,
   "started_us":1764755000000000,"ended_us":1764755000500000,"mode_requested":"enforce",
   "mode_applied":"enforce","enabled_by":"preload","locked":1,"error":0,"exit_status":null,
   "exit_signal":11,"violations":1,"source":"verify"}],
 "violations":[{"time_us":1764755000400000,"pid":4242,"tid":4242,"comm":"ctxdemo",
   "exe_path":"/usr/bin/ctxdemo","identity":"build-id:$1","build_id":"$1","package":"pkg-ctx",
   "package_version":"1.0-1","ip":4198700,"sp":140737488346000,"ssp":140737354125304,
   "ip_object":"/usr/bin/ctxdemo","ip_offset":4396,"ret_addr":4198800,"ret_object":"/usr/bin/ctxdemo",
   "ret_offset":4496,"kind":"near ret","error_code":1,"mode":"enforce","action":"killed","sources":8,"run":0}],
 "decisions":[{"identity":"build-id:$1","path":"/usr/bin/ctxdemo","state":"quarantined",
   "decision":"off","since_us":1764755000400000,"reason":"violation: near ret","flags":0}]}
JSON
}
