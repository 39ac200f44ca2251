#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The audit userspace patch (kernel-patches/audit-userspace/) on the host, no
# emulator: the records of tests/kernel/audit-records-v3.log (the kernel
# series' v3 format, as an auditd without the patch writes them:
# type=UNKNOWN[1704]) read by the patched ausearch and aureport. They must
# name 1704 ANOM_CTRL_PROT, find it with -m ANOM_CTRL_PROT, -p, -x and
# --session, and interpret its fields: the file fields decoded whether
# quoted, hex-encoded (a path with a space) or ?, uid/auid as names, the
# CONFIG_CHANGE records' res; aureport --anomaly counts it and
# ausearch --format text says what happened. The same name and field
# checks run against the host's unpatched ausearch too, and must fail
# there: otherwise the sample proves nothing.
#
# SKIP (77) when the patched build is not in the cache:
# kernel-patches/audit-userspace/build makes it (CI:
# scripts/ci-prepare.d/15-audit-userspace).
set -u
src=${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/include/lib.sh"
need_cmd ausearch auditd
need_cmd aureport auditd
log=$src/tests/kernel/audit-records-v3.log
[ -r "$log" ] || { echo "FAIL: $log missing"; exit 1; }
dir=$("$src/kernel-patches/audit-userspace/build" --print-dir) || {
	echo "SKIP: the patched audit userspace is not built (run kernel-patches/audit-userspace/build)"
	exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# names, not numbers, and the C locale's dates: the checks read fields only
export LC_ALL=C TZ=UTC

fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# The sample itself: 6 records of type 1704 in the v3 format, every field
# present in order; one far_ret with ? for the target, its files and
# offsets; a path with a space, hex-encoded; the CONFIG_CHANGE ops.
n1704=$(grep -c '^type=UNKNOWN\[1704\] msg=audit(' "$log")
[ "$n1704" = 6 ] || bad "the sample has $n1704 records of type 1704, want 6"
order=' auid=[^ ]* uid=[^ ]* gid=[^ ]* ses=[^ ]*( subj=[^ ]*)? pid=[^ ]* comm=[^ ]* exe=[^ ]* tid=[^ ]* ip=0x[^ ]* sp=0x[^ ]* ssp=0x[^ ]* error=0x[^ ]* kind=(near_ret|far_ret|endbranch|rstorssp|setssbsy|unknown) target=[^ ]* expected=[^ ]* ip_file=[^ ]* ip_off=[^ ]* target_file=[^ ]* target_off=[^ ]* expected_file=[^ ]* expected_off=[^ ]* shstk_mode=(enforce|audit|compat) shstk_action=(killed|signal|resync) count=[0-9]+ count_scope=(site|overflow)$'
[ "$(grep '^type=UNKNOWN\[1704\] ' "$log" | grep -cE "^[^ ]+ msg=audit\([0-9.:]+\):$order")" = "$n1704" ] ||
	bad "a 1704 record of the sample is not in the v3 layout"
grep -q ' kind=far_ret target=? expected=? ip_file=? ip_off=? target_file=? target_off=? expected_file=? expected_off=? ' "$log" ||
	bad "the sample has no far_ret record with ? fields"
grep -q ' ip_file=2F[0-9A-F]*20[0-9A-F]* ' "$log" ||
	bad "the sample has no hex-encoded ip_file with a space"
for op in 'shstk_audit_mode old=0 new=1' shstk_audit_exec 'shstk_file_policy shstk_policy=audit' \
	'shstk_compat_mode old=0 new=1'; do
	grep -q "^type=CONFIG_CHANGE .* op=$op res=1\$" "$log" || bad "the sample has no CONFIG_CHANGE op=$op"
done

# check WHAT FILE PATTERN...: FILE has a line matching every (grep -E)
# pattern; prints "ok" or "FAIL" (quiet with $quiet=1) and counts failures
# in $nfail.
check() {
	_what=$1 _f=$2
	shift 2
	cp "$_f" "$work/h"
	for _p in "$@"; do
		grep -E -e "$_p" "$work/h" >"$work/h2"
		mv "$work/h2" "$work/h"
	done
	if [ -s "$work/h" ]; then
		[ "$quiet" = 1 ] || echo "ok: $_what"
	else
		nfail=$((nfail + 1))
		[ "$quiet" = 1 ] || echo "FAIL: $_what"
	fi
}

# names TOOL-PREFIX...: what says that the tool knows the type by its name.
# Sets $nfail.
names() {
	nfail=0
	"$@" -if "$log" -i >"$work/i" 2>&1
	check "ausearch -i prints type=ANOM_CTRL_PROT for each record" "$work/i" '^type=ANOM_CTRL_PROT msg=audit\('
	[ "$(grep -c '^type=ANOM_CTRL_PROT msg=audit(' "$work/i")" = "$n1704" ] || {
		nfail=$((nfail + 1))
		[ "$quiet" = 1 ] || echo "FAIL: ausearch -i: $(grep -c '^type=ANOM_CTRL_PROT msg=audit(' "$work/i") lines of type=ANOM_CTRL_PROT, want $n1704"
	}
	"$@" -if "$log" -m ANOM_CTRL_PROT --raw >"$work/m" 2>&1
	[ "$(grep -c '^type=' "$work/m")" = "$n1704" ] && [ "$(grep -c '^type=UNKNOWN\[1704\] ' "$work/m")" = "$n1704" ] || {
		nfail=$((nfail + 1))
		[ "$quiet" = 1 ] || { echo "FAIL: ausearch -m ANOM_CTRL_PROT --raw, want the $n1704 records:"; head -n 3 "$work/m"; }
	}
	[ "$quiet" = 1 ] || [ "$nfail" != 0 ] || echo "ok: ausearch -m ANOM_CTRL_PROT finds the $n1704 records"
}

# fields TOOL-PREFIX...: what says that the tool interprets the fields.
fields() {
	nfail=0
	"$@" -if "$log" -i >"$work/i" 2>&1
	# hex-encoded (a path with a space), decoded; tid left as it is, like pid
	check "hex-encoded ip_file, target_file and expected_file decoded" "$work/i" \
		'^type=[^ ]+ msg=audit\([^)]*:8\) : ' ' pid=60 comm=tool exe=/opt/my app/bin/tool tid=61 ' \
		' ip_file=/opt/my app/lib/libplug\.so ip_off=0x11a0 target_file=/opt/my app/lib/libplug\.so target_off=0x11b8 expected_file=/opt/my app/bin/tool expected_off=0x1234 '
	check "uid, gid and auid as names" "$work/i" '^type=[^ ]+ msg=audit\([^)]*:8\) : ' \
		' auid=root uid=nobody gid=nogroup ses=2 '
	# quoted: the quotes go, as exe's do
	check "quoted ip_file and target_file unquoted" "$work/i" '^type=[^ ]+ msg=audit\([^)]*:3\) : ' \
		' auid=unset uid=root ' ' ip_file=/payload/t_records ip_off=0x16f4 target_file=/payload/t_records '
	check "far_ret: ? stays ?" "$work/i" '^type=[^ ]+ msg=audit\([^)]*:9\) : ' \
		' kind=far_ret target=\? expected=\? ip_file=\? ip_off=\? target_file=\? target_off=\? expected_file=\? expected_off=\? '
	check "subj kept, anonymous ip_file ?" "$work/i" '^type=[^ ]+ msg=audit\([^)]*:15\) : ' \
		' ses=unset subj=unconfined pid=62 ' ' ip_file=\? ip_off=\? target_file=/payload/t_records '
}

# ---- the patched tools ----
pa="env LD_LIBRARY_PATH=$dir/lib $dir/bin/ausearch"
pr="env LD_LIBRARY_PATH=$dir/lib $dir/bin/aureport"
echo "patched audit userspace: $dir ($(sed -n 's/^package: //p' "$dir/VERSION"))"
quiet=0
# shellcheck disable=SC2086 # a command prefix
names $pa
[ "$nfail" = 0 ] || fail=1
# shellcheck disable=SC2086
fields $pa
[ "$nfail" = 0 ] || fail=1
cp "$work/i" "$work/patched-i"

# CONFIG_CHANGE: the series' ops, res interpreted
for op in 'shstk_audit_mode old=0 new=1' 'shstk_audit_mode old=1 new=0' shstk_audit_exec \
	'shstk_file_policy shstk_policy=audit' 'shstk_compat_mode old=0 new=1'; do
	grep -q "^type=CONFIG_CHANGE msg=audit(.* op=$op res=yes \$" "$work/patched-i" &&
		echo "ok: CONFIG_CHANGE op=$op res=yes" || bad "ausearch -i: no CONFIG_CHANGE op=$op res=yes"
done

# Searches that need ausearch to parse the record (as it parses ANOM_ABEND)
# count NAME WANT ARGS...: ausearch ARGS --raw finds WANT records of type 1704
count() {
	_name=$1 _want=$2
	shift 2
	# shellcheck disable=SC2086
	_n=$($pa -if "$log" -m ANOM_CTRL_PROT "$@" --raw 2>/dev/null | grep -c '^type=UNKNOWN\[1704\] ')
	[ "$_n" = "$_want" ] && echo "ok: ausearch -m ANOM_CTRL_PROT $_name: $_n" ||
		bad "ausearch -m ANOM_CTRL_PROT $_name: $_n records, want $_want"
}
count "-p 60" 3 -p 60
count "-x '/opt/my app/bin/tool' (a hex-encoded exe)" 3 -x "/opt/my app/bin/tool"
count "-c t_records" 3 -c t_records
count "--session 2" 3 --session 2
count "-ua 65534" 3 -ua 65534

# aureport --anomaly counts it (the whole kernel anomaly range) and, with
# the record parsed, names its exe
$pr -if "$log" --anomaly --summary -i >"$work/rs" 2>&1
grep -qE "^$n1704 +ANOM_CTRL_PROT\$" "$work/rs" && echo "ok: aureport --anomaly --summary: $n1704 ANOM_CTRL_PROT" ||
	{ cat "$work/rs"; bad "aureport --anomaly --summary does not count $n1704 ANOM_CTRL_PROT"; }
$pr -if "$log" --anomaly -i >"$work/ra" 2>&1
grep -q ' ANOM_CTRL_PROT /opt/my app/bin/tool ? ? root 7$' "$work/ra" && echo "ok: aureport --anomaly names the exe" ||
	{ cat "$work/ra"; bad "aureport --anomaly: no ANOM_CTRL_PROT line with the exe /opt/my app/bin/tool"; }
# the normalizer: subject, action, object, how
$pa -if "$log" -m ANOM_CTRL_PROT --format text >"$work/t" 2>&1
grep -q '^At .* root, acting as nobody, caused-control-protection-fault /opt/my app/bin/tool using far_ret$' "$work/t" &&
	echo "ok: ausearch --format text: caused-control-protection-fault EXE using KIND" ||
	{ cat "$work/t"; bad "ausearch --format text does not normalize ANOM_CTRL_PROT"; }

# ---- the host's audit userspace, unpatched: the same checks must fail ----
echo "host: $(command -v ausearch) (auditd $(dpkg-query -W -f='${Version}' auditd 2>/dev/null))"
quiet=1
names ausearch
if [ "$nfail" = 0 ]; then
	bad "the host's ausearch names 1704 already: these checks no longer show the patch"
else
	echo "ok: the host's ausearch fails $nfail of the name checks"
fi
fields ausearch
if [ "$nfail" = 0 ]; then
	bad "the host's ausearch interprets the file fields already: these checks no longer show the patch"
else
	echo "ok: the host's ausearch fails $nfail of the field checks"
fi
grep -q '^type=UNKNOWN\[1704\] msg=audit(.* ip_file=2F6F70742F6D79206170702F6C69622F6C6962706C75672E736F ' "$work/i" &&
	echo "ok: the host's ausearch -i prints type=UNKNOWN[1704] and the hex-encoded ip_file" ||
	bad "the host's ausearch -i: no type=UNKNOWN[1704] with the ip_file hex-encoded"

[ "$fail" = 0 ] && echo "PASS: audit userspace names and interprets ANOM_CTRL_PROT"
exit "$fail"
