#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The preload's line in /etc/ld.so.preload for every program ABI (issues 17
# and 28).  ld.so expands $LIB per ABI, so an i386 or x32 program loads a
# library of its own class that does nothing; the x86-64 library in such a
# process would make ld.so print "wrong ELF class" on its stderr.  Whether
# an i386 or x32 program can exist at all is the kernel's business: one
# without IA32 emulation, or booted with ia32_emulation=false, refuses it
# with ENOEXEC, and then enable must not ask for its library.
#
#   test_preload_abi.sh enable   what `shstkctl preload enable/status` decide,
#                                against what the kernel does with the
#                                toolchain's i386 and x32 programs (tp-exec);
#                                runs on every kernel
#   test_preload_abi.sh exec     i386 and x32 programs under the written line;
#                                on a kernel that runs no i386 programs it is
#                                a SKIP that names the guest lane proving it
#                                (qemu-preload-abi, the project's kernel)
#
# POSIX sh: it runs on the host (meson, tests/preload/meson.build) and in
# the guest of the qemu-preload-abi lanes under busybox (emu-payload-abi/).
# Environment: SHSTKCTL PRELOAD_LIB PRELOAD_LIB_I386 PRELOAD_LIB_X32
# HELLO_I386 HELLO_X32 TP_EXEC PROBE SHSTK_SRCDIR; in the guest also
# SHSTK_ABI_REAL_ETC=1 (write the real /etc/ld.so.preload: the guest is
# thrown away) and SHSTK_ABI_EXPECT_I386=runs|refused (which kernel this
# is meant to be: a lane booted the other way fails).
set -u
mode=${1:-}
case $mode in enable | exec) ;; *) echo "usage: $0 enable|exec" >&2; exit 2 ;; esac
: "${SHSTKCTL:?}" "${PRELOAD_LIB:?}" "${TP_EXEC:?}" "${PROBE:?}" "${SHSTK_SRCDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
[ -n "${PRELOAD_LIB_I386:-}" ] || missing "the i386 preload library (not built)" "a compiler that accepts -m32: apt-get install gcc"
[ -n "${PRELOAD_LIB_X32:-}" ] || missing "the x32 preload library (not built)" "a compiler that accepts -mx32: apt-get install gcc"
[ -n "${HELLO_I386:-}" ] || missing "an i386 program (tests/tools hello-i386, not built)" "apt-get install gcc-multilib"
[ -n "${HELLO_X32:-}" ] || missing "an x32 program (tests/tools hello-x32, not built)" "apt-get install gcc-multilib"

W=$(mktemp -d /tmp/test-preload-abi.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
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
	_d=$1 _t=$2
	shift 2
	for _re in "$@"; do
		if printf '%s\n' "$_t" | grep -Eq -- "$_re"; then pass; else fail "$_d: no /$_re/ in: $_t"; fi
	done
}
finish() {
	echo "# $checks checks, $fails failed"
	[ "$fails" -eq 0 ] && [ "$checks" -gt 0 ]
	exit $?
}

# ---- what the kernel does with the toolchain's programs (the witness) ----
# witness PROG: "runs" (exit 0, printed hello), "refused" (execve ENOEXEC),
# or "died" (loaded, then failed: x32 with its system calls off)
witness() {
	_o=$("$TP_EXEC" "$1" 2>/dev/null)
	_rc=$?
	if [ $_rc = 0 ] && [ "$_o" = hello ]; then
		echo runs
	elif [ $_rc = 126 ] && [ "$_o" = exec-errno=ENOEXEC ]; then
		echo refused
	elif [ $_rc = 126 ]; then
		echo "error $_o"
	else
		echo died
	fi
}
k386=$(witness "$HELLO_I386")
kx32=$(witness "$HELLO_X32")
echo "# this kernel ($(uname -r)): i386 programs: $k386, x32 programs: $kx32"
case $k386 in runs | refused) pass ;; *) fail "the i386 witness neither ran nor was refused: $k386" ;; esac
if [ -n "${SHSTK_ABI_EXPECT_I386:-}" ]; then
	[ "$k386" = "$SHSTK_ABI_EXPECT_I386" ] && pass ||
		fail "this lane's kernel should have i386 programs '$SHSTK_ABI_EXPECT_I386', they are '$k386'"
fi

# The line enable writes, as `preload --help` documents it.
line=$("$SHSTKCTL" preload --help | sed -n 's/.*--library PATH  the preload (default \([^)]*\)).*/\1/p')
case $line in
*'$LIB'*) pass ;;
*) fail "preload enable does not write \$LIB (default library: '$line')"; finish ;;
esac
# sub LINE DIR: LINE with $LIB replaced by DIR
sub() { printf '%s\n' "$1" | sed "s|\\\$LIB|$2|"; }
native=lib/x86_64-linux-gnu

if [ "$mode" = enable ]; then
	# A root with the x86-64 library and the loaders of both other ABIs, but
	# neither of their libraries.
	ar=$W/root
	mkdir -p "$ar/etc" "$ar/lib" "$ar/libx32"
	x86=$ar$(sub "$line" "$native")
	mkdir -p "$(dirname "$x86")"
	cp "$PRELOAD_LIB" "$x86"
	: >"$ar/lib/ld-linux.so.2"
	: >"$ar/libx32/ld-linux-x32.so.2"

	# status says, per ABI, what the kernel does: the same as the witness.
	out=$("$SHSTKCTL" preload status --root "$ar" --kernel-abis auto)
	rc=$?
	[ $rc = 3 ] && pass || fail "status of a root without the file: exit $rc, expected 3"
	for abi in i386 x32; do
		[ $abi = i386 ] && k=$k386 || k=$kx32
		case $k in
		runs) re="this kernel runs $abi programs" ;;
		refused) re="this kernel refuses to execute $abi programs: Exec format error" ;;
		*) re="this kernel loads $abi programs but does not serve their system calls" ;;
		esac
		expect "status, $abi" "$out" "^  $abi: ld.so .* installed, library not installed; $re\$"
	done

	# --root alone assumes a kernel that runs every ABI: refused, nothing written.
	out=$("$SHSTKCTL" preload enable --root "$ar" 2>&1)
	rc=$?
	[ $rc = 1 ] && pass || fail "enable, --root, no i386 library: exit $rc, expected 1: $out"
	expect "enable --root refuses without the i386 library" "$out" \
		'refusing to enable: i386 programs .*assumed to run them: the kernel of another root'
	[ ! -e "$ar/etc/ld.so.preload" ] && pass || fail "a refused enable wrote the file"
	dirs386=$(printf '%s\n' "$out" | sed -n 's/.*(in any of \([^)]*\)).*/\1/p')
	[ -n "$dirs386" ] && pass || fail "the refusal names no directories: $out"

	# A list without i386 and x32: enable goes ahead, saying why.
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis x86-64 2>&1)
	rc=$?
	[ $rc = 0 ] && pass || fail "enable --kernel-abis x86-64: exit $rc: $out"
	expect "enable --kernel-abis x86-64" "$out" \
		'^note: i386 programs .* --kernel-abis says the kernel does not run them: not needed now' \
		'^note: x32 programs .* --kernel-abis says the kernel does not run them: not needed now' '^enabled: '
	[ "$(cat "$ar/etc/ld.so.preload" 2>/dev/null)" = "$line" ] && pass ||
		fail "enable --kernel-abis x86-64 wrote '$(cat "$ar/etc/ld.so.preload" 2>/dev/null)'"
	# Enabled so, then a kernel that runs i386 programs (booted later): status
	# and a second enable say it is a problem, and fail; the file stays.
	out=$("$SHSTKCTL" preload status --root "$ar" --kernel-abis x86-64)
	rc=$?
	case $out in *problem:*) rc=problem ;; esac
	[ $rc = 0 ] && pass || fail "status, enabled, kernel runs neither: exit $rc: $out"
	out=$("$SHSTKCTL" preload status --root "$ar" --kernel-abis i386)
	rc=$?
	[ $rc = 1 ] && pass || fail "status, enabled without the i386 library, kernel runs i386: exit $rc"
	expect "status names the problem" "$out" \
		'^problem: i386 programs will print "wrong ELF class" at every start: .*install the package.s i386 library$'
	case $out in *"problem: x32"*) fail "status: x32 called a problem though the kernel runs none: $out" ;; *) pass ;; esac
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis i386 2>&1)
	rc=$?
	[ $rc = 1 ] && pass || fail "enable again, kernel runs i386, no i386 library: exit $rc: $out"
	expect "enable again says the line is there and the problem" "$out" 'already names' '^problem: i386 programs'
	case $out in *refusing*) fail "enable again claims to refuse what is already there: $out" ;; *) pass ;; esac
	[ "$(cat "$ar/etc/ld.so.preload" 2>/dev/null)" = "$line" ] && pass || fail "enable again changed the file"
	rm -f "$ar/etc/ld.so.preload"

	# auto: what this kernel does decides, ABI by ABI (i386 is checked first).
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis auto 2>&1)
	rc=$?
	if [ "$k386" = runs ] || [ "$kx32" = runs ]; then
		[ "$k386" = runs ] && abi=i386 || abi=x32
		[ $rc = 1 ] && pass || fail "enable auto, a kernel that runs $abi programs: exit $rc: $out"
		expect "enable auto, $abi runs" "$out" "refusing to enable: $abi programs .*this kernel runs $abi programs"
		[ ! -e "$ar/etc/ld.so.preload" ] && pass || fail "a refused enable wrote the file"
	else
		[ $rc = 0 ] && pass || fail "enable auto, a kernel that runs neither i386 nor x32 programs: exit $rc: $out"
		expect "enable auto, i386 refused" "$out" \
			'^note: i386 programs .* this kernel refuses to execute i386 programs: Exec format error: not needed now' \
			'^note: x32 programs .* not needed now' '^enabled: '
		[ "$(cat "$ar/etc/ld.so.preload" 2>/dev/null)" = "$line" ] && pass || fail "enable auto wrote the wrong line"
		rm -f "$ar/etc/ld.so.preload"
	fi
	# Both libraries installed (where the refusal said they may be): every mode enables.
	i386lib=$ar$(sub "$line" "${dirs386%%:*}")
	mkdir -p "$(dirname "$i386lib")"
	cp "$PRELOAD_LIB_I386" "$i386lib"
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis i386 2>&1) ||
		fail "enable with the i386 library, i386 listed: $out"
	expect "enable with the i386 library" "$out" '^note: x32 programs' '^enabled: '
	rm -f "$ar/etc/ld.so.preload"
	# x32 alone missing, auto: the kernel's answer for x32 decides.
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis auto 2>&1)
	rc=$?
	case $kx32 in
	runs) [ $rc = 1 ] && pass || fail "enable auto, x32 runs, no x32 library: exit $rc: $out" ;;
	refused) expect "enable auto, x32 refused" "$out" \
		'^note: x32 programs .* this kernel refuses to execute x32 programs: Exec format error: not needed now' ;;
	*) expect "enable auto, x32 system calls off" "$out" \
		'^note: x32 programs .* this kernel loads x32 programs but does not serve their system calls' ;;
	esac
	rm -f "$ar/etc/ld.so.preload"
	xout=$("$SHSTKCTL" preload enable --root "$ar" 2>&1)
	dirsx32=$(printf '%s\n' "$xout" | sed -n 's/.*(in any of \([^)]*\)).*/\1/p')
	expect "enable without the x32 library" "$xout" 'refusing to enable: x32 programs'
	x32lib=$ar$(sub "$line" "${dirsx32%%:*}")
	mkdir -p "$(dirname "$x32lib")"
	cp "$PRELOAD_LIB_X32" "$x32lib"
	for m in all auto x86-64 i386,x32; do
		out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis $m 2>&1) ||
			fail "enable, both libraries, --kernel-abis $m: $out"
		case $out in *note:*) fail "enable, both libraries, $m: a note: $out" ;; *) pass ;; esac
		rm -f "$ar/etc/ld.so.preload"
	done
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis i386,arm64 2>&1)
	rc=$?
	[ $rc = 2 ] && pass || fail "--kernel-abis with an unknown ABI: exit $rc: $out"
	out=$("$SHSTKCTL" preload enable --root "$ar" --kernel-abis '' 2>&1)
	rc=$?
	[ $rc = 2 ] && [ ! -e "$ar/etc/ld.so.preload" ] && pass || fail "--kernel-abis '': exit $rc: $out"

	# A line of the time before $LIB is replaced, other lines kept.
	printf '/usr/lib/other.so\n%s\n' "$(sub "$line" "$native")" >"$ar/etc/ld.so.preload"
	out=$("$SHSTKCTL" preload status --root "$ar")
	expect "status knows the x86-64-only line" "$out" 'preload enabled: .* \(x86-64 only'
	out=$("$SHSTKCTL" preload enable --root "$ar" 2>&1) || fail "enable: $out"
	written=$(cat "$ar/etc/ld.so.preload")
	[ "$written" = "$(printf '/usr/lib/other.so\n%s' "$line")" ] && pass ||
		fail "enable did not replace the x86-64-only line with the \$LIB one: '$written'"
	finish
fi

# ---- exec: programs of every ABI under the written line ----
if [ "$k386" != runs ] && [ "$k386" != refused ]; then
	finish # the witness's failure above, never a skip
fi
if [ "$k386" = refused ]; then
	echo "SKIP: this kernel does not execute i386 programs (execve: ENOEXEC): what an i386 program" \
		"does under the preload's \$LIB line is proved in the guest, covered by lane qemu-preload-abi"
	exit 77
fi
need_cmd strace
# dst PROG: what PROG's ld.so expands $LIB to (read from the path it opens)
dst() { LD_PRELOAD="/nonexistent/\$LIB/x.so" strace -qq -f -e trace=openat "$@" 2>&1 >/dev/null | sed -n 's|.*"/nonexistent/\(.*\)/x.so".*|\1|p' | head -n 1; }
native=$(dst "$PROBE")
lib32=$(dst "$HELLO_I386")
echo "# ld.so expands \$LIB to '$native' (x86-64) and '$lib32' (i386)"
[ -n "$native" ] && [ -n "$lib32" ] && pass || fail "strace showed no \$LIB expansion: '$native' '$lib32'"
ar=$W/root
for d in "$native:$PRELOAD_LIB" "$lib32:$PRELOAD_LIB_I386"; do
	f=$ar$(sub "$line" "${d%%:*}")
	mkdir -p "$(dirname "$f")"
	cp "${d#*:}" "$f"
done
# x32 where the kernel runs x32 programs (CONFIG_X86_X32_ABI and syscall.x32=y)
if [ "$kx32" = runs ]; then
	libx32=$(dst "$HELLO_X32")
	f=$ar$(sub "$line" "$libx32")
	mkdir -p "$(dirname "$f")" && cp "$PRELOAD_LIB_X32" "$f"
fi
pre=$ar$line
out=$(LD_PRELOAD="$pre" "$HELLO_I386" 2>"$W/h32.err")
rc=$?
[ $rc = 0 ] && [ "$out" = hello ] && pass || fail "i386 program under the \$LIB line: exit $rc, out '$out'"
[ ! -s "$W/h32.err" ] && pass || fail "i386 program under the \$LIB line: stderr: $(cat "$W/h32.err")"
expect "x86-64 program under the \$LIB line" "$(LD_PRELOAD="$pre" "$PROBE" 2>&1)" '^preload=present$'
# Control: the x86-64 library named for every ABI, as before $LIB.
LD_PRELOAD="$PRELOAD_LIB" "$HELLO_I386" >/dev/null 2>"$W/h32.err"
expect "control: x86-64 library in an i386 process" "$(cat "$W/h32.err")" 'wrong ELF class'

# The real /etc/ld.so.preload.  In the guest it is written as it is (the
# guest is thrown away); on the host in a private mount namespace, where an
# overlay over /etc holds the written file and the root's prefix is mounted
# over the real one.
prefix=${line%%/\$LIB*}
{
	if [ "${SHSTK_ABI_REAL_ETC:-0}" = 1 ]; then
		echo "mkdir -p $prefix && cp -a $ar$prefix/. $prefix/ || exit 91"
	else
		mkdir -p "$W/ovl/up" "$W/ovl/work"
		echo "mount -t overlay overlay -o lowerdir=/etc,upperdir=$W/ovl/up,workdir=$W/ovl/work /etc || exit 90"
		echo "mkdir -p $prefix && mount --bind $ar$prefix $prefix || exit 91"
	fi
	echo "rm -f /etc/ld.so.preload && $SHSTKCTL preload enable || exit 92"
	echo "$HELLO_I386 2>$W/ns32.err; echo \"rc32=\$?\""
	echo "$PROBE | grep '^preload='"
	echo "rm -f /etc/ld.so.preload"
} >"$W/ns.sh"
if [ "${SHSTK_ABI_REAL_ETC:-0}" = 1 ]; then
	out=$(sh "$W/ns.sh" 2>&1)
else
	need_cmd unshare util-linux
	out=$(unshare --mount --propagation private sh "$W/ns.sh" 2>&1)
fi
expect "/etc/ld.so.preload written by enable: i386 program" "$out" '^rc32=0$'
[ ! -s "$W/ns32.err" ] && pass || fail "/etc/ld.so.preload: i386 program's stderr: $(cat "$W/ns32.err")"
expect "/etc/ld.so.preload: x86-64 program loads the preload" "$out" '^preload=present$'

if [ "$kx32" = runs ]; then
	LD_PRELOAD="$pre" "$HELLO_X32" >/dev/null 2>"$W/hx32.err"
	[ ! -s "$W/hx32.err" ] && pass || fail "x32 program under the \$LIB line: stderr: $(cat "$W/hx32.err")"
else
	echo "# x32: this kernel does not run x32 programs ($kx32): only the i386 library was loaded"
fi
finish
